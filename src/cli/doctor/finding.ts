// What `ferry doctor` reports: one finding per thing checked, each problem with the fix.

export type Severity = 'ok' | 'warning' | 'problem';

export interface Finding {
  /** the area checked: crds, dispatcher, webhook-ca, snapshots, locations */
  area: string;
  /** what in that area: a CRD, a webhook, a CSI driver, a location */
  subject: string;
  severity: Severity;
  message: string;
  /** what to do; every problem and warning has one */
  fix?: string;
}

export const ok = (area: string, subject: string, message: string): Finding => ({
  area,
  subject,
  severity: 'ok',
  message,
});

export const problem = (area: string, subject: string, message: string, fix: string): Finding => ({
  area,
  subject,
  severity: 'problem',
  message,
  fix,
});

export const warning = (area: string, subject: string, message: string, fix: string): Finding => ({
  area,
  subject,
  severity: 'warning',
  message,
  fix,
});

/** What the doctor learns about the install it checks, shared by the checks. */
export interface Install {
  /** ferry's namespace */
  namespace: string;
  /** the ValidatingWebhookConfiguration to check */
  webhook: string;
  /** the CRDs this ferry would install, as objects */
  crds: Record<string, unknown>[];
}
