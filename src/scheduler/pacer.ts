/**
 * A worker's side of a paced campaign's starts: each claimed lead is dialled at the start slot its
 * campaign's admission gave it, and the claims look far enough ahead for slots to cover the time
 * until the next claim (see PACE_LOOKAHEAD).
 */
import { paceLookaheadMs, type PaceSlot } from '../lifecycle/index.js';

export class Pacer {
  /** Per paced campaign, this worker's dials waiting for their slots, in line, and when the last went. */
  private readonly turns = new Map<string, Promise<void>>();
  private readonly lastDial = new Map<string, number>();
  /**
   * How long this worker's claims take (ms), counted from when the claim was due (a timer that
   * fired late, a database thread busy with other work, count too): the longest recent one, let go
   * slowly. A claim that was late once is likely late again soon (a backlog being folded, a busy
   * event loop), and a lookahead shorter than that lateness loses the slots it passes.
   */
  private claimMs = 0;

  /** How far ahead the next claim takes start slots: twice the recent claims' time, within PACE_LOOKAHEAD. */
  lookaheadMs(): number {
    return paceLookaheadMs(2 * this.claimMs);
  }

  /**
   * A claim begins (for a paced campaign's wake due at `dueAt`, epoch ms, when that is what woke
   * it): call `ended` when it is over, and its time counts towards the lookahead.
   */
  claimStarted(dueAt?: number): { ended: () => void } {
    const now = Date.now();
    const started = dueAt !== undefined && dueAt < now ? dueAt : now;
    return {
      ended: () => {
        const took = Date.now() - started;
        this.claimMs = Math.max(took, 0.9 * this.claimMs + 0.1 * took);
      },
    };
  }

  /**
   * Waits for a paced campaign's start slot (a fraction of a second ahead at most). This worker's
   * dials of one campaign go one after another, each at least a step after the one before it
   * actually went: a timer that fires late (a busy event loop) delays the next dial rather than
   * bunching the two.
   */
  awaitSlot(slot: PaceSlot): Promise<void> {
    const turn = (this.turns.get(slot.campaignId) ?? Promise.resolve()).then(async () => {
      const last = this.lastDial.get(slot.campaignId);
      const wait = Math.max(slot.at.getTime(), last === undefined ? 0 : last + slot.stepMs) - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      this.lastDial.set(slot.campaignId, Date.now());
    });
    this.turns.set(slot.campaignId, turn);
    void turn.then(() => {
      // The last in line clears the campaign's entries once its step has passed.
      if (this.turns.get(slot.campaignId) !== turn) return;
      setTimeout(() => {
        if (this.turns.get(slot.campaignId) !== turn) return;
        this.turns.delete(slot.campaignId);
        this.lastDial.delete(slot.campaignId);
      }, slot.stepMs).unref();
    });
    return turn;
  }
}
