/** The emulator's callee kinds and scenarios files: each kind's script, and a file's mistakes named. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { calleeScript, parseScenarios, readScenarios } from '../../src/emulator/index.js';

describe('callee kinds', () => {
  it('make the scripts the kinds promise', () => {
    assert.deepEqual(calleeScript({ kind: 'voicemail', greeting: 'Leave a message.', beep: { hz: 900 } }).steps, [
      { say: 'Leave a message.' },
      { beep: { hz: 900 } },
      { waitForAudio: 30_000 },
      { hangup: true },
    ]);
    assert.equal(calleeScript({ kind: 'voicemail' }).answer, 'voicemail');
    assert.deepEqual(calleeScript({ kind: 'voicemail', greeting: 'Hi.', hangupBeforeBeep: true }).steps, [{ say: 'Hi.' }, { hangup: true }]);
    assert.deepEqual(calleeScript({ kind: 'voicemail', greeting: 'Hi.', beep: false }).steps!.map((s) => Object.keys(s)[0]), ['say', 'waitForAudio', 'hangup']);
    const menu = calleeScript({ kind: 'menu', prompt: 'Press 2.', keys: '2', then: 'Sales.' });
    assert.deepEqual(menu.steps![0], { say: 'Press 2.' });
    assert.equal((menu.steps![1] as { expectDigits: string }).expectDigits, '2');
    assert.deepEqual(menu.steps!.slice(2), [{ say: 'Sales.' }, { waitForAudio: 20_000 }, { hangup: true }]);
    assert.equal(calleeScript({ kind: 'busy' }).answer, 'busy');
    assert.equal(calleeScript({ kind: 'no_answer' }).answer, 'no_answer');
    assert.deepEqual(calleeScript({ kind: 'opt_out', says: 'Stop.' }).steps!.map((s) => Object.values(s)[0]), [15_000, 'Stop.', 15_000, true]);
    assert.deepEqual(calleeScript({ kind: 'person', says: ['Yes.'] }).steps, [{ waitForAudio: 15_000 }, { say: 'Yes.' }, { waitForAudio: 15_000 }, { hangup: true }]);
  });
});

describe('scenarios files', () => {
  it('reads number -> callee', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'scenarios-')), 'callees.json');
    fs.writeFileSync(file, JSON.stringify({ '+14155550101': { kind: 'voicemail' }, '+14155550102': { kind: 'script', script: { answer: 'answer', steps: [{ hangup: true }] } } }));
    const scenarios = readScenarios(file);
    assert.deepEqual([...scenarios.keys()], ['+14155550101', '+14155550102']);
    assert.deepEqual(scenarios.get('+14155550102'), { answer: 'answer', steps: [{ hangup: true }] });
  });

  it('names what is wrong', () => {
    assert.throws(() => parseScenarios([]), /JSON object of phone number -> callee/);
    assert.throws(() => parseScenarios({ '415 555': { kind: 'busy' } }), /not an E\.164 number/);
    assert.throws(() => parseScenarios({ '+14155550101': { kind: 'robot' } }), /"kind" must be one of voicemail, menu/);
    assert.throws(() => parseScenarios({ '+14155550101': { kind: 'menu' } }), /a menu needs "keys"/);
    assert.throws(() => parseScenarios({ '+14155550101': { kind: 'script' } }), /a script needs "script"/);
    assert.throws(() => readScenarios('/nonexistent/callees.json'), /callees\.json/);
  });
});
