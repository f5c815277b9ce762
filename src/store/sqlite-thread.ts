/**
 * The body of the outbox thread (see threaded-sqlite-store.ts): owns the SQLite connection and
 * runs the store's methods as the main thread asks, in batches both ways.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SqliteStore, type SqliteStoreOptions } from './sqlite-store';
import { encodeThreadError, reviveBuffers, type StoreCall, type StoreReply } from './thread-messages';

const store = SqliteStore.open(workerData as SqliteStoreOptions);
const port = parentPort!;

let replies: StoreReply[] = [];
let replyScheduled = false;

/** Replies settled in the same turn (one group commit) travel in one message. */
function reply(message: StoreReply): void {
  replies.push(message);
  if (replyScheduled) return;
  replyScheduled = true;
  setImmediate(() => {
    replyScheduled = false;
    const batch = replies;
    replies = [];
    port.postMessage(batch);
  });
}

port.on('message', (calls: StoreCall[]) => {
  for (const { id, method, args } of calls) {
    let result: Promise<unknown>;
    try {
      result = (store[method] as (...a: unknown[]) => Promise<unknown>).apply(store, reviveBuffers(args));
    } catch (error) {
      result = Promise.reject(error);
    }
    result.then(
      (value) => reply({ id, value }),
      (error: unknown) => reply({ id, error: encodeThreadError(error) }),
    );
  }
});
