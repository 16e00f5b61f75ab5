/** A phone number's problem, in words: written wrong, or written right but not a number of its country. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { E164_HINT, e164Checker, isE164, phoneNumberProblem } from '../../src/lib/phone.js';

describe('phone numbers', () => {
  it('accepts valid E.164 numbers', () => {
    for (const n of ['+14155550123', '+442071838750', '+919876543210']) {
      assert.equal(phoneNumberProblem(n), undefined, n);
      assert.equal(isE164(n), true, n);
    }
  });

  it('says a number is written wrong when it is not E.164', () => {
    for (const n of ['+1 (646) 555-1234', '6465551234', '+12', '', 7, null]) {
      assert.equal(phoneNumberProblem(n), E164_HINT, String(n));
      assert.equal(isE164(n), false);
    }
  });

  it('says a number written right is not valid for its country, naming the country', () => {
    assert.equal(phoneNumberProblem('+15555550104'), 'is written as E.164, but is not a valid number for its country (+1, United States and 24 other countries)');
    assert.equal(phoneNumberProblem('+4420718'), 'is written as E.164, but is not a valid number for its country (+44)');
    assert.equal(phoneNumberProblem('+999123456789'), "is written as E.164, but begins with no country's calling code");
    assert.equal(isE164('+15555550104'), false);
  });
});

describe('e164Checker (a list import\'s numbers)', () => {
  it('gives isE164\'s verdicts, a valid number\'s block sparing the parse of its neighbours', () => {
    const check = e164Checker();
    const numbers = ['+14155550123', '+14155550124', '+1415555012', '+12125550100', '+10005550100', '+1 415 555 0125', '+447700900123', '+447700900124', '+4477009001', 'abc', ''];
    for (const n of numbers) assert.equal(check(n), isE164(n), n);
    // An invalid number's block is not remembered: a valid neighbour is still taken.
    const fresh = e164Checker();
    assert.equal(fresh('+10005550100'), false);
    assert.equal(fresh('+12125550101'), true);
  });
});
