import { createHash } from 'node:crypto';

/** Content hash of a skill: the first 16 hex chars of SHA-256 of its UTF-8 bytes (upstream's cache key). */
export function skillHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}
