// The installer's wait for the dispatcher pod (test/support/dispatcher-start.ts), against a scripted kubectl: a
// port taken between choosing it and binding it is told apart from every other failure, which is reported with
// the pod's log, and pods of an earlier start (other ports) are not mistaken for this one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { awaitDispatcher } from '../../support/dispatcher-start.ts';

const pod = (name: string, metricsPort: number, status: object) => ({
  metadata: { name },
  spec: { nodeName: 'node-1', containers: [{ env: [{ name: 'FERRY_METRICS_PORT', value: String(metricsPort) }] }] },
  status,
});

function kubectl(pods: object[], logs: Record<string, string>) {
  const calls: string[][] = [];
  return {
    calls,
    async run(args: string[]): Promise<string> {
      calls.push(args);
      if (args[0] === 'get' && args[1] === 'pods') return JSON.stringify({ items: pods });
      if (args[0] === 'get' && args[1] === 'events')
        return 'LAST SEEN   TYPE   REASON   OBJECT   MESSAGE\n1s   Normal   Scheduled   pod/p   assigned';
      if (args[0] === 'logs') return logs[`${args[3]}${args.includes('--previous') ? ' previous' : ''}`] ?? '';
      throw new Error(`unexpected kubectl ${args.join(' ')}`);
    },
  };
}

// no process listens on port 9 of the loopback (discard), so /readyz never answers
const closedPort = 9;
const target = (k: ReturnType<typeof kubectl>) => ({
  kubectl: k.run,
  namespace: 'ferry-system',
  selector: 'v=1',
  metricsPort: closedPort,
});

test('a container restarted over EADDRINUSE means the port was taken: the log of the run before the restart says so', async () => {
  const k = kubectl(
    [pod('d-1', closedPort, { phase: 'Running', containerStatuses: [{ restartCount: 2, state: { running: {} } }] })],
    {
      'd-1 previous': 'Error: listen EADDRINUSE: address already in use 127.0.0.1:9\n',
    },
  );
  const start = await awaitDispatcher(target(k), 20_000);
  assert.deepEqual(start, {
    ready: false,
    portTaken: true,
    why: 'its container stopped:\nError: listen EADDRINUSE: address already in use 127.0.0.1:9',
  });
});

test('any other stop is not a taken port, and its log is in the reason', async () => {
  const k = kubectl(
    [
      pod('d-1', closedPort, {
        phase: 'Failed',
        containerStatuses: [{ restartCount: 0, state: { terminated: { exitCode: 1 } } }],
      }),
    ],
    {
      'd-1': 'Cannot read the webhook certificate /tls/tls.crt\n',
    },
  );
  const start = await awaitDispatcher(target(k), 20_000);
  assert.equal(start.ready, false);
  assert.equal(!start.ready && start.portTaken, false);
  assert.match(!start.ready ? start.why : '', /Cannot read the webhook certificate/);
});

test('a pod of an earlier start (another metrics port) that restarted is not this start failing; the timeout describes what is there', async () => {
  const k = kubectl(
    [
      pod('old', closedPort + 1, {
        phase: 'Running',
        containerStatuses: [{ restartCount: 5, state: { running: {} } }],
      }),
    ],
    {
      'old previous': 'EADDRINUSE',
    },
  );
  const start = await awaitDispatcher(target(k), 2_500);
  assert.equal(start.ready, false);
  assert.equal(!start.ready && start.portTaken, false);
  assert.match(
    !start.ready ? start.why : '',
    /not ready within 2.5 s:\nno pod with FERRY_METRICS_PORT=9 \(selector v=1\)\nevents:\n.*Scheduled/s,
  );
  assert.ok(!k.calls.some((args) => args[0] === 'logs' && args[3] === 'old'), "the old pod's log is not read");
});
