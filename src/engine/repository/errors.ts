// Errors a person can act on. Each message is one sentence naming what is wrong.

export class RepositoryError extends Error {}

export class NoRepositoryError extends RepositoryError {
  constructor(location: string) {
    super(`there is no repository at ${location} (no config file); create one with "ferry repo init"`);
  }
}

export class WrongPasswordError extends RepositoryError {
  constructor(location: string) {
    super(`wrong password: no key in the repository at ${location} opens with it`);
  }
}

export class RepositoryExistsError extends RepositoryError {
  constructor(location: string) {
    super(`a repository already exists at ${location}`);
  }
}

export class CorruptBlobError extends RepositoryError {
  constructor(pack: string, blob: string, why: string) {
    super(`corrupted pack ${pack} holding blob ${blob}: ${why}`);
  }
}

export class BlobPastPackEndError extends RepositoryError {
  constructor(pack: string, blob: string, offset: number, length: number, packSize: number) {
    super(
      `the index places blob ${blob} at ${offset}-${offset + length} in pack ${pack}, which is only ${packSize} bytes: the index does not match the pack`,
    );
  }
}

/** Two blobs the index places at one offset of a pack: at most one of them can be there. */
export class SharedOffsetError extends RepositoryError {
  constructor(pack: string, blob: string, other: string, offset: number) {
    super(
      `the index places blob ${blob} at offset ${offset} in pack ${pack}, where it also places blob ${other}: the index does not match the pack`,
    );
  }
}

export class MissingBlobError extends RepositoryError {
  constructor(type: string, blob: string) {
    super(`${type} blob ${blob} is not in any index of the repository`);
  }
}
