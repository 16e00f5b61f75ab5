/**
 * A template's "Voice and model": the voice its calls speak with, the LLM model and temperature of
 * its replies, and the language its callers are heard in, chosen from what this Dialer has
 * configured (GET /agent-options). Each left at its default keeps the service's setting. And the
 * languages its calls speak (the first the one a call starts in), each one's voice, and whether the
 * speech-to-text's detected language switches the call.
 */
import { useEffect, useState } from 'preact/hooks';
import { templates } from '../api/endpoints.js';
import type { AgentChoice, AgentOptions } from '../api/types.js';
import { useLoad } from '../lib/use.js';
import { Card, ErrorNote, Field } from './ui.js';

type Option = AgentOptions['llm_models'][number];

/** A select of `options` with the service's default first; a stored value no longer offered stays shown. */
function ChoiceSelect({ name, value, options, onChange, disabled, groupBy }: { name: string; value: string | undefined; options: Option[]; onChange(v: string | undefined): void; disabled: boolean; groupBy?: (o: Option) => string }) {
  const byDefault = options.find((o) => o.default);
  const stale = value !== undefined && !options.some((o) => o.id === value);
  const groups = new Map<string, Option[]>();
  for (const o of options) {
    const group = groupBy?.(o) ?? '';
    groups.set(group, [...(groups.get(group) ?? []), o]);
  }
  const list = (items: Option[]) =>
    items.map((o) => (
      <option key={o.id} value={o.id}>
        {o.label}
      </option>
    ));
  return (
    <select name={name} value={value ?? ''} disabled={disabled} onChange={(e) => onChange(e.currentTarget.value || undefined)}>
      {/* The default by its short name (a voice's without its service): the card's columns are narrow. */}
      <option value="">{byDefault ? `Default: ${byDefault.id.slice(byDefault.id.indexOf(':') + 1)}` : 'Service default'}</option>
      {stale && <option value={value}>{value} (not offered now)</option>}
      {groupBy
        ? [...groups].map(([group, items]) => (
            <optgroup key={group} label={group}>
              {list(items)}
            </optgroup>
          ))
        : list(options)}
    </select>
  );
}

/** "en-US, es-ES" as a list of tags: split at commas and spaces, blanks and repeats dropped. */
function parseLanguages(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter(Boolean))];
}

const PROVIDERS: Record<string, string> = { openai: 'OpenAI speech', elevenlabs: 'ElevenLabs', cartesia: 'Cartesia', azure: 'Azure Speech', google: 'Google Cloud', sarvam: 'Sarvam', local: 'Local voice' };

export function AgentPanel({ value, onChange, writable, errorAt }: { value: AgentChoice; onChange(next: AgentChoice): void; writable: boolean; errorAt(path: string): string | undefined }) {
  const options = useLoad((signal) => templates.agentOptions(signal), []);
  const o = options.data;
  const set = <K extends keyof AgentChoice>(key: K, v: AgentChoice[K] | undefined) => {
    const next = { ...value };
    if (v === undefined) delete next[key];
    else next[key] = v;
    onChange(next);
  };
  const voices = (o?.voices ?? []) as Array<Option & { provider: string }>;
  const byProvider = (v: Option) => PROVIDERS[(v as Option & { provider: string }).provider] ?? '';
  // The languages as typed ("en-US, es-ES"): kept as text while it is edited, stored as a list.
  const [languagesText, setLanguagesText] = useState((value.languages ?? []).join(', '));
  useEffect(() => {
    if (parseLanguages(languagesText).join(',') !== (value.languages ?? []).join(',')) setLanguagesText((value.languages ?? []).join(', '));
  }, [value.languages]);
  const languages = value.languages ?? [];
  const setLanguages = (text: string) => {
    setLanguagesText(text);
    const list = parseLanguages(text);
    const next = { ...value };
    if (list.length) next.languages = list;
    else delete next.languages;
    // A voice or detection for languages no longer declared goes with them.
    const kept = Object.entries(next.language_voices ?? {}).filter(([tag]) => list.slice(1).includes(tag));
    if (kept.length) next.language_voices = Object.fromEntries(kept);
    else delete next.language_voices;
    if (list.length < 2) delete next.detect_language;
    onChange(next);
  };
  const setLanguageVoice = (tag: string, voice: string | undefined) => {
    const entries = Object.entries(value.language_voices ?? {}).filter(([t]) => t !== tag);
    if (voice) entries.push([tag, voice]);
    set('language_voices', entries.length ? Object.fromEntries(entries) : undefined);
  };
  const languagesError = errorAt('/agent/languages') ?? languages.map((_, i) => errorAt(`/agent/languages/${i}`)).find(Boolean);
  return (
    <Card title="Voice and model" id="agent-choice">
      {options.error && <ErrorNote error={options.error} />}
      <div class="form-grid agent-grid">
        <Field label="Voice" error={errorAt('/agent/voice')} hint="What the agent speaks with">
          <ChoiceSelect name="voice" value={value.voice} options={voices} onChange={(v) => set('voice', v)} disabled={!writable || !o} groupBy={(v) => PROVIDERS[(v as Option & { provider: string }).provider] ?? ''} />
        </Field>
        <Field label="LLM model" error={errorAt('/agent/llm_model')} hint={o && !o.llm_models.length ? 'No LLM is configured' : 'What writes the replies'}>
          <ChoiceSelect name="llm_model" value={value.llm_model} options={o?.llm_models ?? []} onChange={(v) => set('llm_model', v)} disabled={!writable || !o?.llm_models.length} />
        </Field>
        <Field label="Temperature" error={errorAt('/agent/temperature')} hint="0 to 2: higher varies the replies more">
          <input
            name="temperature"
            type="number"
            min="0"
            max="2"
            step="0.1"
            disabled={!writable}
            placeholder={`Default: ${o?.temperature ?? "the model's"}`}
            value={value.temperature ?? ''}
            onInput={(e) => {
              const raw = e.currentTarget.value;
              set('temperature', raw === '' || Number.isNaN(Number(raw)) ? undefined : Number(raw));
            }}
          />
        </Field>
        <Field label="Speech-to-text language" error={errorAt('/agent/stt_language')} hint={o && !o.stt_languages.length ? 'No speech-to-text is configured' : "The callers' language"}>
          <ChoiceSelect name="stt_language" value={value.stt_language} options={o?.stt_languages ?? []} onChange={(v) => set('stt_language', v)} disabled={!writable || !o?.stt_languages.length} />
        </Field>
        <Field label="Languages" error={languagesError} hint="Tags, the first the call's own (en-US, es-ES); a call switches between them">
          <input name="languages" type="text" disabled={!writable} placeholder="One language" value={languagesText} onInput={(e) => setLanguages(e.currentTarget.value)} />
        </Field>
        {languages.slice(1).map((tag) => (
          <Field key={tag} label={`Voice in ${tag}`} error={errorAt(`/agent/language_voices/${tag}`)} hint="Default: the voice above">
            <ChoiceSelect name={`voice-${tag}`} value={value.language_voices?.[tag]} options={voices} onChange={(v) => setLanguageVoice(tag, v)} disabled={!writable || !o} groupBy={byProvider} />
          </Field>
        ))}
        {languages.length > 1 && (
          <Field label="Detect the language" error={errorAt('/agent/detect_language')} hint="Switch when the speech-to-text hears another of them">
            <label class="check">
              <input name="detect_language" type="checkbox" disabled={!writable} checked={value.detect_language === true} onChange={(e) => set('detect_language', e.currentTarget.checked || undefined)} />
              Detect
            </label>
          </Field>
        )}
      </div>
    </Card>
  );
}
