/**
 * An undo history of a text (the flow's JSON): each change is an entry, except that a run of
 * changes with the same key made close together (typing in one field) is one entry, so that undo
 * takes back a word or a burst of typing rather than one character.
 */
import { useCallback, useRef, useState } from 'preact/hooks';

interface Entry {
  text: string;
  key: string | undefined;
  atMs: number;
}

/** Changes of one key closer together than this are merged into one entry. */
const MERGE_WITHIN_MS = 1200;
const MAX_ENTRIES = 200;

export interface History {
  /** Records a change; `key` names where it was made (a field), undefined never merges. */
  record(text: string, key?: string): void;
  /** Forgets everything: `text` is the only entry. */
  reset(text: string): void;
  undo(): string | undefined;
  redo(): string | undefined;
  canUndo: boolean;
  canRedo: boolean;
}

export function useHistory(initial: string): History {
  const entries = useRef<Entry[]>([{ text: initial, key: undefined, atMs: 0 }]);
  const at = useRef(0);
  // A counter that re-renders the page when what undo and redo can do changes.
  const [, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);

  const record = useCallback((text: string, key?: string) => {
    const list = entries.current;
    const top = list[at.current]!;
    if (top.text === text) return;
    const now = performance.now();
    const merge = key !== undefined && top.key === key && now - top.atMs < MERGE_WITHIN_MS && at.current > 0;
    list.length = at.current + 1;
    if (merge) list[at.current] = { text, key, atMs: now };
    else {
      list.push({ text, key, atMs: now });
      if (list.length > MAX_ENTRIES) list.shift();
      at.current = list.length - 1;
    }
    bump();
  }, []);
  const reset = useCallback((text: string) => {
    entries.current = [{ text, key: undefined, atMs: 0 }];
    at.current = 0;
    bump();
  }, []);
  const undo = useCallback(() => {
    if (at.current === 0) return undefined;
    at.current -= 1;
    bump();
    return entries.current[at.current]!.text;
  }, []);
  const redo = useCallback(() => {
    if (at.current >= entries.current.length - 1) return undefined;
    at.current += 1;
    bump();
    return entries.current[at.current]!.text;
  }, []);
  return { record, reset, undo, redo, canUndo: at.current > 0, canRedo: at.current < entries.current.length - 1 };
}
