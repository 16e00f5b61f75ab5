import { Batcher } from '../lib/batcher.js';
import type { LeadsRepository, NewLead } from './repository.js';

/**
 * Single pushes written by group commit (see Batcher). A failed group is retried row by row, so
 * one bad row (say, its template deleted a moment ago) fails only its own push.
 */
export class GroupInserter {
  private readonly batcher: Batcher<NewLead, undefined>;

  constructor(repo: LeadsRepository) {
    this.batcher = new Batcher(
      async (leads) => {
        await repo.insertMany(leads);
        return leads.map(() => undefined);
      },
      {
        onBatchError: async (leads) => {
          const results: (undefined | Error)[] = [];
          for (const lead of leads) results.push(await repo.insertMany([lead]).then(() => undefined, (err: unknown) => (err instanceof Error ? err : new Error(String(err)))));
          return results;
        },
      },
    );
  }

  insert(lead: NewLead): Promise<undefined> {
    return this.batcher.submit(lead);
  }
}
