export interface ThrowawayPostgres {
  url: string;
  port: number;
  halt(): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}
export function startThrowawayPostgres(options?: { quiet?: boolean }): Promise<ThrowawayPostgres>;
