/**
 * The API's shapes, as the server's own TypeBox schemas define them: the dashboard never writes a
 * request or response shape by hand. Type-only imports: nothing of the server is bundled.
 */
import type { Static } from 'typebox';
import type { Lead as LeadSchema, PushBody as PushBodySchema, PushResult as PushResultSchema, BatchResult as BatchResultSchema, AbortResult as AbortResultSchema } from '../../../src/leads/schema.js';
import type { Template as TemplateSchema } from '../../../src/templates/routes.js';
import type { Flow as FlowType, FlowNode as FlowNodeType } from '../../../src/voice/flow/schema.js';
import type { Configuration as ConfigurationSchema, CreateConfigurationBody as CreateConfigurationBodySchema, PreCheck as PreCheckType } from '../../../src/configurations/schema.js';
import type { OutboundNumber as NumberSchema, CreateBody as NumberBodySchema } from '../../../src/numbers/routes.js';
import type { Trunk as TrunkSchema, TrunkBody as TrunkBodySchema, TrunkFailure as TrunkFailureSchema } from '../../../src/trunks/routes.js';
import type { Reseller as ResellerSchema, Merchant as MerchantSchema, User as UserSchema } from '../../../src/tenants/routes.js';
import type { LoginResponse as LoginResponseSchema, TokenRecord as TokenRecordSchema, IssuedToken as IssuedTokenSchema } from '../../../src/auth/routes.js';
import type { Me as MeType } from '../../../src/auth/me.js';
import type { Entry as BlacklistEntrySchema, Added as BlacklistAddedSchema, Removed as BlacklistRemovedSchema } from '../../../src/blacklist/routes.js';
import type { Delivery as DeliverySchema } from '../../../src/webhooks/routes.js';
import type { AnalyticsBody as AnalyticsBodyType, QueryType as QueryTypeType, Granularity as GranularityType, Filters as FiltersType } from '../../../src/analytics/schemas.js';
import type { AnalyticsResponse as AnalyticsResponseSchema } from '../../../src/analytics/schemas.js';
import type { HealthSchema } from '../../../src/app.js';
import type { TestCase as TestCaseSchema, TestCaseBody as TestCaseBodySchema, TestRun as TestRunSchema } from '../../../src/template-tests/schema.js';
import type { Problem as ProblemType } from '../../../src/lib/errors.js';
import type { AgentChoice as AgentChoiceType, AgentOptions as AgentOptionsType } from '../../../src/voice/agent-choice.js';

export type Lead = Static<typeof LeadSchema>;
export type PushBody = Static<typeof PushBodySchema>;
export type PushResult = Static<typeof PushResultSchema>;
export type BatchResult = Static<typeof BatchResultSchema>;
export type AbortResult = Static<typeof AbortResultSchema>;
export type Template = Static<typeof TemplateSchema>;
export type AgentChoice = AgentChoiceType;
export type AgentOptions = AgentOptionsType;
export type TestCase = Static<typeof TestCaseSchema>;
export type TestCaseBody = Static<typeof TestCaseBodySchema>;
export type TestRun = Static<typeof TestRunSchema>;
export type Flow = FlowType;
export type FlowNode = FlowNodeType;
export type Configuration = Static<typeof ConfigurationSchema>;
export type ConfigurationBody = Static<typeof CreateConfigurationBodySchema>;
export type PreCheck = PreCheckType;
export type OutboundNumber = Static<typeof NumberSchema>;
export type NumberBody = Static<typeof NumberBodySchema>;
export type Trunk = Static<typeof TrunkSchema>;
export type TrunkBody = Static<typeof TrunkBodySchema>;
export type TrunkFailure = Static<typeof TrunkFailureSchema>;
export type Reseller = Static<typeof ResellerSchema>;
export type Merchant = Static<typeof MerchantSchema>;
export type User = Static<typeof UserSchema>;
export type LoginResponse = Static<typeof LoginResponseSchema>;
export type TokenRecord = Static<typeof TokenRecordSchema>;
export type IssuedToken = Static<typeof IssuedTokenSchema>;
export type Me = MeType;
export type BlacklistEntry = Static<typeof BlacklistEntrySchema>;
export type BlacklistAdded = Static<typeof BlacklistAddedSchema>;
export type BlacklistRemoved = Static<typeof BlacklistRemovedSchema>;
export type Delivery = Static<typeof DeliverySchema>;
export type AnalyticsBody = AnalyticsBodyType;
export type AnalyticsResponse = Static<typeof AnalyticsResponseSchema>;
export type QueryType = QueryTypeType;
export type Granularity = GranularityType;
export type AnalyticsFilters = FiltersType;
export type Health = Static<typeof HealthSchema>;
export type Problem = ProblemType;

export interface Paged<T> {
  data: T[];
  total: number;
  page: number;
  page_size: number;
}
