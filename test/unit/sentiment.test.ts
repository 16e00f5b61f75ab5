import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sentimentScore } from '../../src/voice/sentiment.js';

describe('sentimentScore (VADER, local)', () => {
  it('is high for a pleased customer', () => {
    const score = sentimentScore(['Yes, that is great, thank you so much!', 'I love it, perfect.'])!;
    assert.ok(score > 0.8, `score ${score}`);
  });

  it('is low for an angry one', () => {
    const score = sentimentScore(['This is terrible, I hate these calls.', 'Stop calling me, you are awful.'])!;
    assert.ok(score < 0.2, `score ${score}`);
  });

  it('is about 0.5 for neutral statements', () => {
    const score = sentimentScore(['My order number is 42.', 'The delivery address is on Main Street.'])!;
    assert.ok(Math.abs(score - 0.5) < 0.1, `score ${score}`);
  });

  it('stays within 0..1 and is undefined when nothing was said', () => {
    assert.equal(sentimentScore([]), undefined);
    assert.equal(sentimentScore(['', '   ']), undefined);
    for (const text of ['wonderful amazing excellent best', 'worst horrible disgusting awful']) {
      const s = sentimentScore([text])!;
      assert.ok(s >= 0 && s <= 1);
    }
  });
});
