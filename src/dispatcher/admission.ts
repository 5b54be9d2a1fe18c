// AdmissionReview v1 (admission.k8s.io/v1): what the apiserver sends a validating webhook and what it expects
// back. Only the fields ferry reads are typed; the envelope is checked before anything else looks at it.

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo?: { username?: string };
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason: string; message: string };
  warnings?: string[];
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** Why a request is denied: the HTTP-like code and reason the apiserver passes on, and the sentence a user reads. */
export interface Denial {
  code: 403 | 422;
  reason: 'Forbidden' | 'Invalid';
  message: string;
}

export function invalid(message: string): Denial {
  return { code: 422, reason: 'Invalid', message };
}

export function forbidden(message: string): Denial {
  return { code: 403, reason: 'Forbidden', message };
}

const operations: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** The request inside a review body, or a sentence saying why the body is not one. */
export function parseReview(body: unknown): AdmissionRequest | string {
  if (typeof body !== 'object' || body === null) return 'the body is not a JSON object';
  const review = body as Partial<AdmissionReview>;
  if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview')
    return 'the body is not an admission.k8s.io/v1 AdmissionReview';
  const request = review.request as Partial<AdmissionRequest> | undefined;
  if (typeof request !== 'object' || request === null) return 'the AdmissionReview has no request';
  if (typeof request.uid !== 'string' || request.uid === '') return 'the AdmissionReview request has no uid';
  if (typeof request.operation !== 'string' || !operations.includes(request.operation))
    return `the AdmissionReview request has an unknown operation ${JSON.stringify(request.operation)}`;
  if (typeof request.kind?.kind !== 'string') return 'the AdmissionReview request names no kind';
  return request as AdmissionRequest;
}

export function reviewResponse(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

export function allow(uid: string, warnings?: string[]): AdmissionResponse {
  return warnings?.length ? { uid, allowed: true, warnings } : { uid, allowed: true };
}

export function deny(uid: string, denial: Denial): AdmissionResponse {
  return { uid, allowed: false, status: { code: denial.code, reason: denial.reason, message: denial.message } };
}
