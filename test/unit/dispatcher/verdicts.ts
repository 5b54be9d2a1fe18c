// What the webhook answers a review, and assertions on it: a denial's code and the words a user reads.
import assert from 'node:assert/strict';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import type { World } from './world.ts';

export async function answer(
  w: World,
  body: AdmissionReview,
): Promise<{ allowed: boolean; code?: number; message: string; warnings?: string[] }> {
  const result = await handleReview(body, w.handler);
  assert.equal(result.status, 200);
  const response = (result as { review: AdmissionReview }).review.response!;
  return {
    allowed: response.allowed,
    code: response.status?.code,
    message: response.status?.message ?? '',
    warnings: response.warnings,
  };
}

export async function denied(w: World, body: AdmissionReview, pattern: RegExp, code = 422): Promise<void> {
  const a = await answer(w, body);
  assert.equal(a.allowed, false, `allowed, expected a denial matching ${pattern}`);
  assert.match(a.message, pattern);
  assert.equal(a.code, code, a.message);
}

export async function allowed(w: World, body: AdmissionReview): Promise<void> {
  const a = await answer(w, body);
  assert.equal(a.allowed, true, a.message);
  assert.equal(a.warnings, undefined, 'the dispatcher validates this kind (no "does not validate" warning)');
}
