/** The knowledge base's request and response schemas (the API's and the dashboard's types). */
import { Type, type Static } from 'typebox';
import { Id, Timestamp } from '../http/index.js';

/** How many chunks a search answers at most, and by default. */
export const MAX_SEARCH_RESULTS = 20;
export const DEFAULT_SEARCH_RESULTS = 5;

/** The largest document taken, in characters (about 30,000 words). */
export const MAX_DOCUMENT_CHARACTERS = 200_000;

/** The largest file taken (a PDF weighs far more than its text), and its length in base64. */
export const MAX_FILE_BYTES = 10_000_000;
export const MAX_FILE_BASE64 = Math.ceil(MAX_FILE_BYTES / 3) * 4;

export const Format = Type.Union([Type.Literal('text'), Type.Literal('markdown')], { description: 'Plain text or Markdown (headings start a new chunk); default text' });

export const DocumentBody = Type.Object(
  {
    reseller_id: Type.Optional(Id),
    template_id: Type.Optional(Type.Union([Id, Type.Null()], { description: "Only that template's calls search it; absent or null: every template of the reseller" })),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Required with text; with url or file, the page's <title> or the PDF's own title (else the file's name) when absent" })),
    format: Type.Optional(Format),
    text: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_DOCUMENT_CHARACTERS, description: `The document's text, at most ${MAX_DOCUMENT_CHARACTERS} characters (or url, or file)` })),
    file: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_FILE_BASE64,
        description: `A file to read the text from instead, base64-encoded: a PDF, or a UTF-8 text or Markdown file; at most ${MAX_FILE_BYTES / 1_000_000} MB`,
      }),
    ),
    file_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "The file's name: the title when none is given (nor a PDF's own), and `.md` reads it as Markdown" })),
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description: 'A web page (HTML, Markdown, plain text or a PDF) to read the text from instead, fetched once now under the outbound URL policy; its address is kept as source_url',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ title: 'Returns policy', format: 'markdown', text: '# Returns\n\nItems can be returned within 30 days.' }] },
);

const DocumentSummary = {
  id: Type.String(),
  reseller_id: Type.String(),
  template_id: Type.Union([Type.String(), Type.Null()]),
  title: Type.String(),
  format: Format,
  source_url: Type.Union([Type.String(), Type.Null()], { description: 'The web page the text was read from, or null' }),
  chunk_count: Type.Integer({ description: 'How many chunks it was cut into for search' }),
  created_at: Timestamp,
};
export const KnowledgeDocumentSummary = Type.Object(DocumentSummary);
export const KnowledgeDocument = Type.Object({ ...DocumentSummary, text: Type.String() });

export const Chunk = Type.Object({
  document_id: Type.String(),
  title: Type.String({ description: "The document's title" }),
  template_id: Type.Union([Type.String(), Type.Null()]),
  position: Type.Integer({ description: 'The chunk\'s place in its document, from 0' }),
  text: Type.String(),
  rank: Type.Number({ description: 'Full-text rank, or with embeddings the score fusing it with similarity in meaning (higher is better); comparable within one answer only' }),
});

export const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 1000, description: 'The question or words to look for (chunks holding its rarer words first; more of them, closer together, ranks higher)' }),
  template_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Search as that template's calls do: its documents and the reseller-wide ones" })),
  reseller_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'For an admin: one reseller (others search their own)' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_SEARCH_RESULTS, default: DEFAULT_SEARCH_RESULTS })),
});

export type DocumentBody = Static<typeof DocumentBody>;
export type KnowledgeDocument = Static<typeof KnowledgeDocument>;
export type KnowledgeDocumentSummary = Static<typeof KnowledgeDocumentSummary>;
export type Chunk = Static<typeof Chunk>;
