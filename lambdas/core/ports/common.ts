/* What every use case may need: the time, fresh ids, and a page of a list. */
export interface Clock {
  now(): Date;
}

export interface IdGenerator {
  newId(): string;
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}
