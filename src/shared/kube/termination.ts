// The pod's termination message: what the step did, as one JSON object Kubernetes copies into the pod status
// (`kubectl get pod -o jsonpath='{..terminated.message}'`), so nobody has to read logs to learn the outcome.
import { writeFileSync } from 'node:fs';

export interface TerminationMessage {
  outcome: string;
  reason: string;
  counters?: Record<string, number>;
}

/** Kubernetes keeps at most 4096 bytes of it. */
const maxBytes = 4096;

export function encodeTerminationMessage(msg: TerminationMessage): string {
  let text = JSON.stringify(msg);
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const overflow = Buffer.byteLength(text) - maxBytes + 3;
  text = JSON.stringify({ ...msg, reason: `${msg.reason.slice(0, Math.max(0, msg.reason.length - overflow))}...` });
  return Buffer.byteLength(text) <= maxBytes
    ? text
    : JSON.stringify({ outcome: msg.outcome, reason: 'the reason is too long to keep; see the logs' });
}

/** Writes the message; false when there is no termination log (the step runs outside a pod). */
export function writeTerminationMessage(
  msg: TerminationMessage,
  path = process.env.FERRY_TERMINATION_LOG ?? '/dev/termination-log',
): boolean {
  try {
    writeFileSync(path, encodeTerminationMessage(msg));
    return true;
  } catch {
    return false;
  }
}
