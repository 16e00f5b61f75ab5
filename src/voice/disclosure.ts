/**
 * The disclosure a call may have to open with ("This call is from Acme, uses an automated assistant
 * and is recorded"): spoken whole before the agent's first line, never cut by the callee talking
 * over it (the agent does not listen yet), the first line of the transcript, marked as the
 * disclosure. Whether it finished playing is kept on the call's record: a callee who hung up during
 * it did not hear it.
 */
import { recordingAt, type CallContext, type CallIO } from './agent.js';
import { substitute } from './flow/substitute.js';
import type { TranscriptLine } from './flow/types.js';

/** What a call's record (the lead's `metaData.disclosure`) says of its disclosure. */
export interface DisclosureRecord {
  /** The words spoken, `{variable}` placeholders filled from the lead's payload. */
  text: string;
  /** The language it was chosen for, when the configuration had one for the call's language. */
  language?: string;
  /** false: the call ended before the disclosure finished playing (the callee hung up during it). */
  completed: boolean;
  /** Where it begins in the call's recording (ms), when the call is recorded. */
  at_ms?: number;
  /** Why it could not be spoken (text-to-speech failed): the call was ended without the agent's first line. */
  error?: string;
}

export interface DisclosureResult {
  record: DisclosureRecord;
  /** The transcript's first line. */
  line: TranscriptLine;
  /** The agent may go on: the disclosure was heard whole. */
  heard: boolean;
}

/**
 * Speaks the call's disclosure (`context.disclosure`) with the agent's own voice; undefined when the
 * call has none. A call whose disclosure cannot be spoken is hung up: the agent may not speak without it.
 */
export async function speakDisclosure(
  context: CallContext,
  io: CallIO,
  synthesize: (text: string, signal: AbortSignal) => Promise<Int16Array>,
): Promise<DisclosureResult | undefined> {
  if (!context.disclosure) return undefined;
  const text = substitute(context.disclosure.text, context.payload);
  const language = context.disclosure.language ? { language: context.disclosure.language } : {};
  let pcm: Int16Array;
  try {
    pcm = await synthesize(text, io.signal);
  } catch (err) {
    if (!io.signal.aborted) io.hangup();
    const error = `the disclosure could not be spoken: ${(err as Error).message}`;
    return { record: { text, ...language, completed: false, error }, line: { role: 'assistant', content: `${text} [not spoken]`, disclosure: true }, heard: false };
  }
  const at = recordingAt(io.recordingMs?.());
  const played = io.signal.aborted ? 'ended' : await io.play(pcm);
  const completed = played === 'played';
  const content = completed ? text : `${text} [interrupted]`;
  io.observe?.({ type: 'transcript', role: 'assistant', text: content, final: true, ...at });
  return { record: { text, ...language, completed, ...at }, line: { role: 'assistant', content, disclosure: true, ...at }, heard: completed };
}
