/**
 * A paged list route (`GET /things?page=&page_size=&...`): its schema (the query, a page of the
 * item, the problems a list answers) and its handler (the page asked for, the rows and their total
 * from the feature's service, each row as the API shows it). Every list of the API is one of these.
 */
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { App } from './app-types.js';
import { listOf, paged, problems, toPage, type Page } from './schemas.js';

export interface ListRoute<Query extends TSchema, Item extends TSchema, Row> {
  /** The route's config (its permission-matrix cell). */
  config: FastifyContextConfig;
  tags: string[];
  summary: string;
  /** The query string: the page's fields (PageQuery) and the list's filters. */
  querystring: Query;
  item: Item;
  /** The rows of the page asked for and how many match in all. */
  list(request: FastifyRequest, query: Static<Query>, page: Page): Promise<{ rows: Row[]; total: number }>;
  /** A row as the API shows it. */
  view(row: Row): Static<Item>;
}

export function listRoute<Query extends TSchema, Item extends TSchema, Row>(app: App, path: string, route: ListRoute<Query, Item, Row>): void {
  app.get(path, {
    config: route.config,
    schema: {
      tags: route.tags,
      summary: route.summary,
      querystring: route.querystring,
      response: { 200: listOf(route.item), ...problems(400, 401, 403) },
    },
    handler: async (request) => {
      const query = request.query as Static<Query> & { page?: number; page_size?: number };
      const page = toPage(query);
      const { rows, total } = await route.list(request, query, page);
      return paged(rows.map((row) => route.view(row)), total, page) as never;
    },
  });
}
