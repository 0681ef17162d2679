// A sqlite: store of schema version 4 as the server before compact queues wrote it (main at
// 3c653bf: bench/store_memory --jobs 6 --arg-bytes 60, then `sqlite3 FILE .dump`): six
// Mastodon-like push jobs, the first reserved by a FETCH, five queued. compact_store_test opens it
// with today's code: a file of that version must be served as it is.
#pragma once

namespace bulkhead {

inline constexpr const char* kStoreVersion4Dump = R"sql(
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES('clean_shutdown','1');
INSERT INTO meta VALUES('commit_seq','2');
INSERT INTO meta VALUES('schema_version','4');
CREATE TABLE jobs(
  id INTEGER PRIMARY KEY,
  jid TEXT NOT NULL,
  state INTEGER NOT NULL,
  queue TEXT NOT NULL,
  jobtype TEXT NOT NULL,
  score INTEGER NOT NULL,
  enqueued INTEGER NOT NULL,
  reserve_for INTEGER NOT NULL,
  payload TEXT NOT NULL);
INSERT INTO jobs VALUES(1,'000000000000000000000000',4,'push','Web::PushNotificationWorker',1796309059663130,0,1800,'{"jid":"000000000000000000000000","jobtype":"Web::PushNotificationWorker","args":[100000,"xxxxxxxxxxxxxxxx"],"queue":"push"}');
INSERT INTO jobs VALUES(2,'00000000000000009e3779b1',0,'push','Web::PushNotificationWorker',2,0,1800,'{"jid":"00000000000000009e3779b1","jobtype":"Web::PushNotificationWorker","args":[100001,"xxxxxxxxxxxxxxxx"],"queue":"push"}');
INSERT INTO jobs VALUES(3,'00000000000000013c6ef362',0,'push','Web::PushNotificationWorker',3,0,1800,'{"jid":"00000000000000013c6ef362","jobtype":"Web::PushNotificationWorker","args":[100002,"xxxxxxxxxxxxxxxx"],"queue":"push"}');
INSERT INTO jobs VALUES(4,'0000000000000001daa66d13',0,'push','Web::PushNotificationWorker',4,0,1800,'{"jid":"0000000000000001daa66d13","jobtype":"Web::PushNotificationWorker","args":[100003,"xxxxxxxxxxxxxxxx"],"queue":"push"}');
INSERT INTO jobs VALUES(5,'000000000000000278dde6c4',0,'push','Web::PushNotificationWorker',5,0,1800,'{"jid":"000000000000000278dde6c4","jobtype":"Web::PushNotificationWorker","args":[100004,"xxxxxxxxxxxxxxxx"],"queue":"push"}');
INSERT INTO jobs VALUES(6,'000000000000000317156075',0,'push','Web::PushNotificationWorker',6,0,1800,'{"jid":"000000000000000317156075","jobtype":"Web::PushNotificationWorker","args":[100005,"xxxxxxxxxxxxxxxx"],"queue":"push"}');
CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE paused(queue TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE signing_keys(key_id TEXT PRIMARY KEY, pem TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE host_states(
  host TEXT PRIMARY KEY,
  breaker_open_until INTEGER NOT NULL,
  breaker_series_openings INTEGER NOT NULL,
  breaker_openings INTEGER NOT NULL,
  failing_since INTEGER NOT NULL,
  unavailable INTEGER NOT NULL,
  retry_after_until INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE unique_locks(
  key TEXT PRIMARY KEY, jid TEXT NOT NULL, until_us INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE cron_firings(entry TEXT PRIMARY KEY, due_us INTEGER NOT NULL)
  WITHOUT ROWID;
CREATE TABLE records(
  space TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(space, key))
  WITHOUT ROWID;
COMMIT;
)sql";

}  // namespace bulkhead
