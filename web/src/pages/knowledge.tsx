/**
 * Knowledge: the documents the agent answers from (its built-in search_knowledge), a new document
 * typed, pasted, read from a text or Markdown file, or a PDF (whose text the server reads), and a
 * search that shows the passages a call would be handed for a question.
 */
import { useState } from 'preact/hooks';
import { knowledge, type KnowledgeChunk, type KnowledgeDocumentSummary } from '../api/knowledge.js';
import { templates } from '../api/endpoints.js';
import { ErrorNote, Field } from '../components/ui.js';
import { FormModal, ListPage, NamedSelect, useRowAction } from '../components/list-page.js';
import { when } from '../lib/format.js';
import { useLoad } from '../lib/use.js';
import { can } from '../session.js';

export default function KnowledgePage() {
  const docs = useLoad((signal) => knowledge.list(signal), []);
  const tpls = useLoad((signal) => templates.list({}, signal), []);
  const [creating, setCreating] = useState(false);
  const [found, setFound] = useState<{ q: string; chunks: KnowledgeChunk[] } | { error: unknown }>();
  const [searchTemplate, setSearchTemplate] = useState('');
  const writable = can('knowledge', 'write');
  // The documents changed: a search shown from before may name passages no longer there.
  const changed = () => {
    setFound(undefined);
    docs.reload();
  };
  const act = useRowAction(changed);
  const templateName = (id: string | null) => (id ? (tpls.data?.data.find((t) => t.id === id)?.name ?? id) : 'Every template');
  const search = async (event: Event) => {
    event.preventDefault();
    const q = String(new FormData(event.currentTarget as HTMLFormElement).get('q') ?? '').trim();
    if (!q) return;
    try {
      setFound({ q, chunks: (await knowledge.search(q, searchTemplate || undefined)).data });
    } catch (error) {
      setFound({ error });
    }
  };
  return (
    <ListPage<KnowledgeDocumentSummary>
      title="Knowledge"
      subtitle="Documents the agent answers from: a node that offers the built-in search_knowledge looks them up during the call, and the call record cites the passages used."
      action={writable && { label: 'New document', onClick: () => setCreating(true) }}
      toolbar={
        <>
          <form class="toolbar" role="search" onSubmit={search}>
            <Field label="Ask the knowledge base" class="grow">
              <input name="q" type="search" placeholder="How long is the warranty?" maxLength={1000} />
            </Field>
            <Field label="As the calls of">
              <NamedSelect items={tpls.data?.data} value={searchTemplate} onChange={setSearchTemplate} none="Any template" />
            </Field>
            <button type="submit">Search</button>
          </form>
          {found && 'error' in found && <ErrorNote error={found.error} />}
          {found && 'q' in found && (
            <div id="knowledge-results" role="status">
              {found.chunks.length === 0 ? (
                <p>Nothing in the documents matches “{found.q}”.</p>
              ) : (
                <ol class="knowledge-results">
                  {found.chunks.map((c) => (
                    <li key={`${c.document_id}:${c.position}`}>
                      <div class="knowledge-source">
                        <strong>{c.title}</strong> · passage {c.position + 1} · rank {c.rank.toFixed(3)}
                      </div>
                      <p class="knowledge-text">{c.text.replace(/\n{2,}/g, "\n")}</p>
                    </li>
                  ))}
                </ol>
              )}
            </div>
          )}
        </>
      }
      list={docs}
      caption="Knowledge documents"
      rowKey={(d) => d.id}
      empty="No document yet: add one, and offer search_knowledge in a template's node."
      columns={[
        { key: 'title', label: 'Title', render: (d) => <strong>{d.title}</strong> },
        { key: 'template', label: 'For', render: (d) => templateName(d.template_id) },
        { key: 'format', label: 'Format', render: (d) => (d.format === 'markdown' ? 'Markdown' : 'Text') },
        { key: 'source', label: 'From', render: (d) => (d.source_url ? <a href={d.source_url} target="_blank" rel="noopener noreferrer">{new URL(d.source_url).host}</a> : 'typed or a file') },
        { key: 'chunks', label: 'Passages', class: 'num', render: (d) => d.chunk_count.toLocaleString() },
        { key: 'added', label: 'Added', render: (d) => when(d.created_at) },
        {
          key: 'actions',
          label: '',
          render: (d) =>
            writable ? (
              <div class="row-actions">
                <button type="button" class="danger" onClick={() => act(() => knowledge.remove(d.id), `${d.title} deleted.`, `Delete ${d.title}? Calls stop finding it at once.`)}>
                  Delete
                </button>
              </div>
            ) : null,
        },
      ]}
    >
      {creating && <NewDocument templates={tpls.data?.data} onClose={() => setCreating(false)} onDone={changed} />}
    </ListPage>
  );
}

function NewDocument({ templates: items, onClose, onDone }: { templates: readonly { id: string; name: string }[] | undefined; onClose: () => void; onDone: () => void }) {
  const [templateId, setTemplateId] = useState('');
  const [text, setText] = useState('');
  const [url, setUrl] = useState('');
  const [title, setTitle] = useState('');
  const [format, setFormat] = useState<'text' | 'markdown'>('text');
  /** A PDF chosen: sent as it is (the server reads its text), in base64. */
  const [pdf, setPdf] = useState<{ name: string; base64: string } | undefined>();
  /** A text or Markdown file is read here and sent as the document's text; a PDF is sent whole. */
  const readFile = async (event: Event) => {
    const file = (event.currentTarget as HTMLInputElement).files?.[0];
    setPdf(undefined);
    if (!file) return;
    if (file.type === 'application/pdf' || /\.pdf$/i.test(file.name)) {
      setPdf({ name: file.name, base64: base64(new Uint8Array(await file.arrayBuffer())) });
      setText('');
      return;
    }
    setText(await file.text());
    if (!title) setTitle(file.name.replace(/\.[^.]+$/, ''));
    if (/\.(md|markdown)$/i.test(file.name)) setFormat('markdown');
  };
  const elsewhere = !!url.trim() || !!pdf;
  return (
    <FormModal
      title="New knowledge document"
      submit="Add"
      wide
      onClose={onClose}
      onSubmit={async () => {
        const named = title.trim() ? { title } : {};
        const source = url.trim() ? { url: url.trim(), ...named } : pdf ? { file: pdf.base64, file_name: pdf.name, ...named } : { title, text, format };
        await knowledge.create({ ...source, ...(templateId ? { template_id: templateId } : {}) });
        onDone();
      }}
    >
      {(at) => (
        <>
          <Field label="Title" error={at('/title')}>
            <input name="title" required={!elsewhere} maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} placeholder="Returns policy" />
          </Field>
          <Field label="For" hint="Only that template's calls search it, or every template's" error={at('/template_id') ?? at('/reseller_id')}>
            <NamedSelect items={items} value={templateId} onChange={setTemplateId} none="Every template" />
          </Field>
          <Field label="Format">
            <select name="format" value={format} onChange={(e) => setFormat(e.currentTarget.value as 'text' | 'markdown')}>
              <option value="text">Text</option>
              <option value="markdown">Markdown</option>
            </select>
          </Field>
          <Field label="From a web page" hint="Its text is read once now (the title defaults to the page's), instead of the text below" error={at('/url')}>
            <input name="url" type="url" maxLength={2000} value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://example.com/returns" />
          </Field>
          <Field label="From a file" hint="A .txt or .md file is read into the text below; a PDF's text is read when it is added (the title defaults to the PDF's own)" error={at('/file')}>
            <input type="file" accept=".txt,.md,.markdown,.pdf,text/plain,text/markdown,application/pdf" onChange={readFile} disabled={!!url.trim()} />
          </Field>
          <Field label="Text" wide error={at('/text')} hint="Paragraphs (blank-line separated) are kept together in passages of about 200 words">
            <textarea
              name="text"
              required={!elsewhere}
              disabled={elsewhere}
              rows={12}
              value={text}
              placeholder={pdf ? `The text of ${pdf.name} is read when it is added` : ''}
              onInput={(e) => setText(e.currentTarget.value)}
            />
          </Field>
        </>
      )}
    </FormModal>
  );
}

/** Bytes as base64, a slice at a time (a PDF may be megabytes). */
function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}
