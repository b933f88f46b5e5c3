// Where file bytes live on disk. Each organisation has its own subdirectory under whichever directory a
// target names, so two organisations' targets can never see each other's files even if they share a path.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export interface FileStore {
  write(directory: string, organisationId: string, fileId: string, bytes: Buffer): Promise<void>;
  read(directory: string, organisationId: string, fileId: string): Promise<Buffer>;
  /** Removes bytes no row will ever point at (a write the database refused); none there is no failure. */
  remove(directory: string, organisationId: string, fileId: string): Promise<void>;
}

const fileIdPattern = /^[0-9a-f-]{36}$/;

function fileStorePath(directory: string, organisationId: string, fileId: string): string {
  // Ids come from our database (UUIDs), never from the path of a request; checked anyway.
  if (!fileIdPattern.test(fileId) || !fileIdPattern.test(organisationId)) throw new Error('not a file id');
  return path.join(directory, organisationId, fileId);
}

export const diskFileStore: FileStore = {
  async write(directory, organisationId, fileId, bytes) {
    const target = fileStorePath(directory, organisationId, fileId);
    await fs.mkdir(path.dirname(target), { recursive: true });
    // Written under a temporary name and renamed, so a reader never sees half a file.
    const temporary = `${target}.${randomUUID()}.partial`;
    await fs.writeFile(temporary, bytes);
    await fs.rename(temporary, target);
  },
  read(directory, organisationId, fileId) {
    return fs.readFile(fileStorePath(directory, organisationId, fileId));
  },
  remove(directory, organisationId, fileId) {
    return fs.rm(fileStorePath(directory, organisationId, fileId), { force: true });
  },
};

/** The absolute directory of an organisation target, refusing anything that would leave the allowed root. */
export function resolveTargetDirectory(root: string, relative: string): string | undefined {
  const resolved = path.resolve(root, relative);
  return resolved === root || !resolved.startsWith(root + path.sep) ? undefined : resolved;
}
