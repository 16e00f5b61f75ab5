/**
 * The three-node flow the realtime tests run on each realtime model and on the chat LLM (a
 * function with a hook and a transition, a second node, a goodbye node of pre-actions), the
 * script its model follows, and its run on the chat LLM to compare with; the flows of languages and
 * of a declined warm transfer that both realtime models run; templates and calls for them.
 */
import assert from 'node:assert/strict';
import { OutboundClient, parseOutboundAllowList } from '../../src/lib/outbound/index.js';
import { OpenAICompatibleLLM } from '../../src/providers/index.js';
import { createFlowSession, type AgentAction } from '../../src/voice/flow/index.js';
import { TEST_OUTBOUND_ALLOW, type Client } from './app.js';
import type { OpenAIServer } from './openai-server.js';
import { settledLead } from './leads.js';
import { startReceiver } from './receiver.js';

export const GREETING = 'Hello Ana, this is Maya from Acme. I am calling about your order A-42, a blue chair for your study. Shall I confirm it for you today?';

export const flow = (hookUrl: string) => ({
  initial_node: 'greet',
  post_call_analysis: { success_criteria: 'The order was confirmed.' },
  nodes: [
    {
      node_name: 'greet',
      role_messages: [{ role: 'system', content: 'You call {customer_name} for Acme. Be brief.' }],
      task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm order {order_id}.' }],
      functions: [
        {
          name: 'confirm_order',
          properties: { confirmed: { type: 'boolean' } },
          required: ['confirmed'],
          transition_to: 'delivery',
          hooks: [{ name: 'crm', http_request: { url: `${hookUrl}/orders/{order_id}`, method: 'POST', body: { order: '{order_id}', confirmed: '{confirmed}' } } }],
        },
      ],
    },
    {
      node_name: 'delivery',
      task_messages: [{ role: 'system', content: 'Ask which day suits {customer_name} for the delivery.' }],
      functions: [{ name: 'set_day', properties: { day: { type: 'string' } }, required: ['day'], transition_to: 'goodbye' }],
    },
    {
      node_name: 'goodbye',
      task_messages: [{ role: 'system', content: 'Say goodbye.' }],
      pre_actions: [{ type: 'tts_say', text: 'Thank you {customer_name}. Goodbye!' }, { type: 'end_conversation', outcome: 'confirmed' }],
    },
  ],
});

/** A reseller named `name` with the template `confirm` on the flow above, calling all day through the emulator from `number`; its id. */
export async function confirmReseller(admin: Client, name: string, hookUrl: string, number: string): Promise<string> {
  const reseller = (await admin.post('/resellers', { name })).body.id as string;
  const tpl = await admin.post('/templates', { name: 'confirm', reseller_id: reseller, flow: flow(hookUrl) });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
  assert.equal((await admin.post('/numbers', { phone_number: number, provider: 'PROVIDER_A' })).status, 200);
  return reseller;
}

/** What the model (or the chat LLM) answers, turn by turn, for the three-node flow. */
export const SCRIPT = {
  greeting: { text: GREETING },
  confirm: { tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] },
  askDay: { text: 'Great. Which day suits you for the delivery?' },
  setDay: { tools: [{ name: 'set_day', arguments: { day: 'Tuesday' } }] },
};

/** The same flow on the chat LLM: the flow engine with the OpenAI-compatible client, the caller's turns as text. */
export async function onChat(ai: OpenAIServer): Promise<{ nodes: string[]; hook: unknown; outcome: string | undefined }> {
  const chatHooks = await startReceiver({ crm: 'updated' });
  try {
    ai.chat.push(SCRIPT.greeting, SCRIPT.confirm, SCRIPT.askDay, SCRIPT.setDay);
    const session = createFlowSession(flow(chatHooks.url) as never, {
      llm: new OpenAICompatibleLLM({ baseUrl: ai.url, model: 'gpt-4o-mini', timeoutMs: 5000 }),
      variables: { customer_name: 'Ana', order_id: 'A-42' },
      fetch: new OutboundClient(parseOutboundAllowList(TEST_OUTBOUND_ALLOW)).fetch,
    });
    const drain = async (actions: AsyncIterable<AgentAction>) => {
      for await (const _ of actions);
    };
    const signal = new AbortController().signal;
    await drain(session.start(signal));
    await drain(session.userTurn('Yes, please confirm it.', signal));
    await drain(session.userTurn('Tuesday.', signal));
    return { nodes: session.record.node_traversal, hook: chatHooks.requests.map((r) => ({ method: r.method, path: r.path, body: r.body })), outcome: session.record.outcome };
  } finally {
    await chatHooks.close();
  }
}

/**
 * A flow that speaks the template's languages (`agent.languages`): the caller asks for French (not
 * declared: refused), then Spanish; the model confirms the order in Spanish and the goodbye node
 * ends the call.
 */
export const LANGUAGES = { languages: ['en-US', 'es-ES'] };
export const languageFlow = {
  initial_node: 'talk',
  nodes: [
    {
      node_name: 'talk',
      role_messages: [{ role: 'system', content: 'You call {customer_name} for Acme about order {order_id}.' }],
      task_messages: [{ role: 'system', content: 'Ask {customer_name} to confirm the order.' }],
      functions: [
        { name: 'switch_language', type: 'builtin' },
        { name: 'confirm_order', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'], transition_to: 'goodbye' },
      ],
    },
    {
      node_name: 'goodbye',
      task_messages: [{ role: 'system', content: 'Say goodbye.' }],
      pre_actions: [{ type: 'tts_say', text: 'Gracias. Adiós.' }, { type: 'end_conversation', outcome: 'confirmed' }],
    },
  ],
};
export const LANGUAGE_SCRIPT = {
  greeting: { text: 'Hello Ana, shall I confirm your order?' },
  french: { tools: [{ name: 'switch_language', arguments: { language: 'fr-FR' } }] },
  refused: { text: 'I speak English and Spanish.' },
  spanish: { tools: [{ name: 'switch_language', arguments: { language: 'es-ES' } }] },
  confirmed: { text: 'Claro. Confirmo su pedido.', tools: [{ name: 'confirm_order', arguments: { confirmed: true } }] },
};

/** A template `name` of the reseller's on `flow` (with `agent`, its voice and language choices), and a configuration calling all day through the emulator. */
export async function addTemplate(admin: Client, reseller: string, name: string, flow: unknown, agent?: Record<string, unknown>): Promise<void> {
  const tpl = await admin.post('/templates', { name, reseller_id: reseller, flow, ...(agent ? { agent } : {}) });
  assert.equal(tpl.status, 200, JSON.stringify(tpl.body));
  const cfg = await admin.post('/configurations', { reseller_id: reseller, template: tpl.body.id, calling_provider: 'PROVIDER_A', call_start_time: '00:00', call_end_time: '00:00' });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
}

/** Pushes a lead of `template` for Ana (order A-42) at `callee` and waits for the call's end; the lead. */
export async function callAna(admin: Client, reseller: string, requestId: string, callee: string, template: string): Promise<any> {
  const pushed = await admin.post('/leads', { request_id: requestId, template, reseller_id: reseller, payload: { customer_mobile_number: callee, customer_name: 'Ana', order_id: 'A-42' } });
  assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
  return settledLead(admin, pushed.body.lead_call_tracker_id);
}

/**
 * A warm transfer the human declines by key, as each realtime model runs it: the flow, what the
 * model says and hears, the human's and the customer's scripts (the customer speaks once on hold,
 * and hangs up a moment after the model's last reply, once its turn is complete), and the
 * transcript the call leaves.
 */
export const DECLINED = {
  flow: (human: string) => ({
    initial_node: 'help',
    nodes: [
      {
        node_name: 'help',
        task_messages: [{ role: 'system', content: 'Put them through to a person when they ask.' }],
        functions: [{ name: 'talk_to_human', transfer_to_number: human, warm_transfer: { briefing: '{customer_name} asks about order {order_id}.', hold_message: 'One moment.', declined_message: 'My colleague is busy, so I will help you myself.' } }],
      },
    ],
  }),
  replies: [{ text: 'Hello Ana, how can I help you?' }, { tools: [{ name: 'talk_to_human', arguments: {} }] }, { text: 'Of course. What is the new address?' }],
  transcripts: ['A person, please.', 'Then you change the address.'],
  human: { answer: 'answer' as const, steps: [{ waitForAudio: 30_000 }, { dtmf: '2' }, { wait: 5000 }], maxSeconds: 30 },
  customer: {
    answer: 'answer' as const,
    steps: [{ waitForAudio: 15_000 }, { say: 'A person, please.' }, { waitForAudio: 15_000 }, { wait: 300 }, { say: 'Hello?' }, { waitForAudio: 30_000 }, { say: 'Then you change the address.' }, { waitForAudio: 15_000 }, { wait: 2000 }, { hangup: true as const }],
    maxSeconds: 60,
  },
  transcription: [
    ['assistant', 'Hello Ana, how can I help you?'],
    ['user', 'A person, please.'],
    ['assistant', 'One moment.'],
    ['assistant', 'My colleague is busy, so I will help you myself.'],
    ['user', 'Then you change the address.'],
    ['assistant', 'Of course. What is the new address?'],
  ],
};
