/**
 * What every command gets: the process's streams and environment, the connection and typed
 * client (made on first use, so `--help` and usage errors never touch the network or the seed
 * file), and one way to print a result — the API's JSON as it came with `--json`, else the
 * readable rendering.
 */
import type { Command } from 'commander';
import { clientFor } from './api.ts';
import type { PipelineSynthesisClient } from './client.ts';
import { type Connection, resolveConnection } from './config.ts';
import { type Palette, paletteFor } from './render.ts';
import type { ProgressStream } from './wait.ts';

export interface Io {
  /** Where a confirmation is typed (a terminal only: see `isTTY`). */
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: ProgressStream;
  stderr: ProgressStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted by Ctrl-C. */
  interrupt: AbortSignal;
}

export interface GlobalOptions {
  apiUrl?: string;
  token?: string;
  /** A team of the user's, by id or name: the local stack's seeded team of that name, and the team members commands act on. */
  team?: string;
  json?: boolean;
}

export class Context {
  #connection: Connection | undefined;
  #client: PipelineSynthesisClient | undefined;
  readonly json: boolean;
  readonly palette: Palette;

  constructor(
    readonly io: Io,
    private readonly options: GlobalOptions,
  ) {
    this.json = options.json === true;
    this.palette = paletteFor(io.stdout.isTTY === true, io.env);
  }

  get connection(): Connection {
    if (!this.#connection) {
      this.#connection = resolveConnection(
        { apiUrl: this.options.apiUrl, token: this.options.token, team: this.team },
        this.io.env,
        this.io.cwd,
      );
      const seed = this.#connection.fromSeed;
      if (seed) {
        this.io.stderr.write(
          `Using the local stack at ${this.#connection.apiUrl} as ${seed.teamName} (from ${seed.file}); set PIPELINE_SYNTHESIS_API_URL and PIPELINE_SYNTHESIS_API_TOKEN for another API.\n`,
        );
      }
    }
    return this.#connection;
  }

  get client(): PipelineSynthesisClient {
    this.#client ??= clientFor(this.connection);
    return this.#client;
  }

  /** `--team` or PIPELINE_SYNTHESIS_TEAM. */
  get team(): string | undefined {
    return this.options.team ?? (this.io.env.PIPELINE_SYNTHESIS_TEAM || undefined);
  }

  get apiUrl(): string {
    return this.connection.apiUrl;
  }

  /** One API answer: its JSON on one line with --json, else `readable()`. */
  print(body: unknown, readable: () => string): void {
    if (this.json) {
      if (body !== undefined) this.io.stdout.write(`${JSON.stringify(body)}\n`);
      return;
    }
    this.io.stdout.write(`${readable()}\n`);
  }

  /** A note for a person (progress, hints): stderr, so stdout stays the result. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }
}

export function contextOf(io: Io, command: Command): Context {
  return new Context(io, command.optsWithGlobals<GlobalOptions>());
}
