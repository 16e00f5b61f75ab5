import { Batcher } from '../lib/batcher.js';
import type { NewLead } from '../lifecycle/index.js';

/**
 * Single pushes written by group commit (see Batcher). A failed group is retried row by row, so
 * one bad row (say, its template deleted a moment ago) fails only its own push.
 */
export class GroupInserter {
  private readonly batcher: Batcher<NewLead, undefined>;

  constructor(insertMany: (leads: NewLead[]) => Promise<void>) {
    this.batcher = new Batcher(
      async (leads) => {
        await insertMany(leads);
        return leads.map(() => undefined);
      },
      {
        onBatchError: async (leads) => {
          const results: (undefined | Error)[] = [];
          for (const lead of leads) results.push(await insertMany([lead]).then(() => undefined, (err: unknown) => (err instanceof Error ? err : new Error(String(err)))));
          return results;
        },
      },
    );
  }

  insert(lead: NewLead): Promise<undefined> {
    return this.batcher.submit(lead);
  }
}
