/**
 * The corpus of `npm run bench:turns` is the same on every run: its noises come from a seed (the
 * same seed, the same samples), its speech from the repository's synthesiser (the same text, the
 * same samples and word times), its texts and pauses are fixed, and it is split into calls the same
 * way every time.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { buildCorpus, clipsOf, CORPUS_SEED, noises, planCalls, type Behaviour, type Clip } from '../../bench/turns/corpus.js';
import { speechClip } from '../helpers/clips.js';

const fingerprint = (c: Clip) => `${c.id}:${createHash('sha256').update(c.pcm).digest('hex')}:${JSON.stringify(c.words)}`;
const ids = (plan: Behaviour[][]) => plan.map((call) => call.map((b) => b.id));

describe('bench:turns corpus', () => {
  it('noises: the same seed gives the same samples, another seed other ones', () => {
    assert.deepEqual(noises(CORPUS_SEED).map(fingerprint), noises(CORPUS_SEED).map(fingerprint));
    const other = noises(CORPUS_SEED + 1).map(fingerprint);
    const same = noises(CORPUS_SEED).filter((n, i) => fingerprint(n) === other[i]).map((n) => n.id);
    assert.deepEqual(same, ['noise-tone'], 'every noise but the pure tone is drawn from the seed');
  });

  it('the whole corpus: at least 40 behaviours, speech synthesised the same again, the same calls every time', async () => {
    const corpus = await buildCorpus();
    assert.ok(corpus.length >= 40);
    const kinds = new Set(corpus.map((b) => b.kind));
    assert.deepEqual([...kinds].sort(), ['backchannel', 'complete', 'continued', 'interruption', 'noise', 'pause']);
    assert.ok(corpus.flatMap(clipsOf).every((c) => c.pcm.length > 0 && c.durationMs > 0), 'every clip has sound');
    // Speech made again from the same text is the same, sample for sample (one clip of each kind of speech).
    for (const kind of ['pause', 'complete', 'continued', 'backchannel', 'interruption']) {
      const clip = clipsOf(corpus.find((b) => b.kind === kind)!)[0]!;
      assert.equal(fingerprint(await speechClip(clip.id, clip.text)), fingerprint(clip), `${clip.id} "${clip.text}"`);
    }
    assert.deepEqual(ids(planCalls(corpus, 8)), ids(planCalls([...corpus], 8)));
    assert.deepEqual(ids(planCalls(corpus, 8)).flat().sort(), corpus.map((b) => b.id).sort(), 'every behaviour is played once');
  });
});
