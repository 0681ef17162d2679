// SqliteChangeLog: the durable half of the `sqlite:` store. Changes are appended from the event
// loop and committed in groups: everything appended while a commit runs goes into the next
// transaction, so concurrent pushes, acks and fails share one transaction.
//
// Durability: WAL mode. "process" durability (default) uses synchronous=NORMAL: a committed
// transaction is in the WAL file before `durable` callbacks run, so it survives kill -9 of the
// server; a power loss or kernel crash may lose the transactions since the last checkpoint.
// "power" uses synchronous=FULL: the WAL is fsynced at every commit (slower; survives power loss).
//
// Who commits. One connection, used by the writer thread only (and by Load before it starts).
// - Under "process", the event loop makes a turn's changes durable itself, in the redo log
//   (redo_log.h: one record copied into a shared mapping of the file, posted once per turn: no
//   system call; a kill -9 cannot lose it), and leaves them queued for the writer, which commits
//   them to SQLite later with meta.redo_seq (the record's number) in the same transaction.
//   Answers keep their order: the loop answers a logged change at once unless an answer owed
//   before it is still to come (a read, a change it could not log, a logged change held behind
//   one of those; not a ReadAhead, which no answer waits for: reads only keep their order among
//   themselves); such a change is held, and answered, without waiting for its commit, by the
//   loop once the answers before it arrived, or by the writer (in order) when it took the change
//   with them. The writer takes only what the loop has seen (logged or not) while a flush is on
//   its way, except when a writer task is new (it runs after everything appended before it is
//   committed). Nothing is handed to another thread before the answer of a lone PUSH: it waits for
//   a copy, not for a transaction.
// - The writer keeps one transaction open for up to kRedoGatherDelay (or kRedoGatherMaxChanges
//   changes): it writes what it takes into it (state updates, records and counters only at the
//   commit, the last per row: sqlite_write_behind.h), answers reads from it (the rows as the
//   logged changes left them), posts the answers it owes, and commits when the delay is over. It
//   commits at once when it took a change the loop did not log or found the redo log full, and
//   before a checkpoint, a writer task or Close. The loop logs while the redo log has room:
//   it has two regions of kRedoRegionBytes (redo_log.h), and the loop moves to the other one
//   once the one it appends to holds kRedoSwitchBytes and the writer has committed every record
//   of the other (the writer tells the log what it committed after each commit), so that the
//   loop logs on under sustained load; the log is full only when the writer is a whole region
//   behind. Changes that carry a signing key are never logged (they are written to the
//   database only). At open, the records after meta.redo_seq are committed before anything is
//   loaded (a gap in their numbers refuses the start: records are lost), and the log is emptied
//   once the store runs; a clean Close removes its file.
// - Everything else is committed by the writer thread before it is answered (one posted closure
//   per batch carries its answers, in order): "power" commits (an fsync each), changes the loop
//   did not log, checkpoints and writer tasks (backups: a task runs after everything appended
//   before it is committed, so a backup holds every answered change).
// - No fsync ever runs on the loop: SQLite's automatic checkpoint is replaced by one the writer
//   runs (after a commit that leaves kWalAutocheckpointPages in the WAL), and after a checkpoint
//   the writer also makes the commit that restarts the WAL, the one that syncs the new WAL header
//   (SQLite's wal.c syncs it unless synchronous=OFF).
//
// A failed commit or redo write (disk full, I/O error) is sticky: the first one is logged at error
// level, its callers get its error, and every later batch is answered with failure() without
// being written, so the file keeps exactly what was committed before it, and the redo log what
// was logged (answered) before it, to be committed at the next open (the owning store refuses
// changes from then on: see EmbeddedStore's degraded mode).
//
// Damage (Load refuses to start, FailedPrecondition naming the file and what to do; a refused
// file is left exactly as it was, WAL included):
// - `path` exists but is empty (0 bytes, no WAL beside it), is not an SQLite database, or has no
//   bulkhead schema. A path that does not exist is a new store: it is created with its schema
//   in place (built beside it and renamed), so bulkhead never leaves an empty file at `path`.
//   `path` missing while `path`-wal exists is refused too (the WAL of a removed store).
// - A damaged redo log: a record that fails its checks with whole records after it, or numbers
//   that do not follow meta.redo_seq one by one (redo_log.h). A last record a kill cut short
//   (never answered) ends the log.
// - Lost commits: every commit increments meta.commit_seq and then records the number in the
//   side file `path`-commits (not synced). If the database opens with a smaller number than the
//   side file holds, commits SQLite reported done are gone (a damaged WAL frame stops SQLite's
//   replay, a removed or truncated WAL, a restored backup).
// - After an unclean stop (meta.clean_shutdown is not "1": kill -9, crash, failed commit,
//   power loss) PRAGMA quick_check runs before anything is loaded. A clean Close sets the flag;
//   opening clears it.
// - A jobs row whose state is unknown or whose payload is not a JSON object with the row's jid.
//   With `salvage_damaged_jobs`, such rows are moved to the table damaged_jobs instead (with the
//   reason) and the others are served. At start every state is checked, and the payload of every
//   job not queued; of the queued ones (loaded cold, payload left in the file) only the first
//   kStartSample by id, unless salvaging (then all). A queued payload is otherwise checked when
//   ReadJobs first reads it (FETCH, a lookup by jid): a damaged one is moved to damaged_jobs
//   then, whatever the flag, and answered as not stored (never handed to a worker). A row this
//   run wrote is not parsed again when read (its payload was checked when it was pushed; the
//   file is the server's alone while it runs): only its state is checked.
//
// Format: see kSchemaVersion and the upgrade notes in sqlite_schema.h.
//
// The members are defined by concept: sqlite_change_log.cc (appending, the writer thread, commits,
// Close), sqlite_change_log_open.cc (opening, creating and checking the file),
// sqlite_change_log_load.cc (reading the store into MemoryState).
//
// Thread-safety: Append may be called from any thread; Load and Close from the owner only, on the
// event loop (the thread `poster` runs closures on), as is the log's destruction.
#pragma once

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "bulkhead/store/change_log.h"
#include "bulkhead/store/redo_log.h"
#include "bulkhead/store/sqlite_backup.h"
#include "bulkhead/store/sqlite_statements.h"
#include "bulkhead/store/sqlite_write_behind.h"
#include "bulkhead/store/store.h"
#include "bulkhead/util/log_limiter.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bulkhead {

class SqliteChangeLog final : public ChangeLog {
 public:
  // `path`: database file (created with its directory if missing). `poster` runs durable
  // callbacks on the event loop. `max_page_count` is for tests only: when positive, the file is
  // capped at that many pages (PRAGMA max_page_count, set after Load), so that a commit that
  // would grow it further fails with SQLITE_FULL ("database or disk is full") like a full disk.
  // `salvage_damaged_jobs`: see the damage notes above.
  SqliteChangeLog(std::string path, Store::Poster poster, std::string durability,
                  int64_t max_page_count = 0, bool salvage_damaged_jobs = false);
  ~SqliteChangeLog() override;

  Status Load(MemoryState& state) override;
  void Append(std::vector<Change> changes, std::function<void(Status)> durable) override;
  Status failure() const override;
  void ReadJobs(std::vector<int64_t> ids, ReadDone done) override;
  void ReadAhead(std::vector<int64_t> ids, ReadDone done) override;
  void Close() override;
  StoreBackup* backup() override { return &backup_; }

  // Hands `task` to the writer thread, which calls it with its connection between commits (after
  // each batch, at once when idle) until it returns true; at Close, once more with stopping=true
  // (the task then cleans up). The online backup's steps (sqlite_backup.h). Thread-safe.
  void RunOnWriter(SqliteWriterTask task);

  // How many queued payloads Load checks at start (the others when first read): enough to find a
  // store damaged throughout, bounded so that a restart costs the same at any backlog.
  static constexpr size_t kStartSample = 10000;
  // Tests: a smaller sample (before Load).
  void set_start_sample(size_t n) { start_sample_ = n; }

  static constexpr int kSchemaVersion = 4;
  // WAL bounds: the writer thread checkpoints (PASSIVE) once a commit leaves the WAL with this
  // many pages, and SQLite truncates the WAL file back to kWalSizeLimitBytes at the commit that
  // restarts it. With 4 KiB pages the -wal file stays near 4 MiB (bigger only while a single
  // transaction is bigger).
  static constexpr int kWalAutocheckpointPages = 1000;
  static constexpr int64_t kWalSizeLimitBytes = int64_t{4} << 20;
  // The redo log ("process" only; see "Who commits"): two regions of kRedoRegionBytes (the file
  // holds both); the loop moves to the other region once the one it appends to holds
  // kRedoSwitchBytes and every record of the other is committed. When both hold records not
  // committed and the one appended to has no room, the loop stops logging (the changes wait for
  // the writer's commit) until the writer has committed the other region's records.
  static constexpr uint64_t kRedoSwitchBytes = uint64_t{1} << 20;
  static constexpr uint64_t kRedoRegionBytes = uint64_t{8} << 20;
  // Tests: how many times the loop found the redo log full (each time the changes of its turn
  // waited for a commit instead). Thread-safe.
  uint64_t redo_fills() const;
  // How long the writer keeps a transaction open for more logged changes before it commits
  // them, and how many changes in it end the wait early.
  static constexpr std::chrono::microseconds kRedoGatherDelay{5000};
  static constexpr size_t kRedoGatherMaxChanges = 4096;
  // Tests: how long the writer gathers (before Load). A long delay keeps logged changes out of
  // the database, as a kill -9 would find them.
  void set_redo_gather_delay(std::chrono::microseconds d) { gather_delay_ = d; }

 private:
  struct Pending {
    std::vector<Change> changes;
    // Logged changes: empty once the loop answered them, else held for the writer to answer.
    std::function<void(Status)> durable;
    // A read instead (ReadJobs): sees every change queued before it (written to the transaction).
    bool read = false;
    bool ahead = false;  // ReadAhead: no answer after it waits for its own
    // The redo record that holds `changes`, or 0 (not logged: only a commit makes them durable).
    int64_t redo_seq = 0;
    std::vector<int64_t> ids;
    ReadDone read_done;
  };

  // `p` owes an answer that the answers after it wait for (a read, a change not answered yet).
  static bool OwesInOrder(const Pending& p) { return (p.read && !p.ahead) || p.durable; }
  void QueueRead(std::vector<int64_t> ids, ReadDone done, bool ahead);
  Status OpenDatabase();
  // FailedPrecondition when the path no longer names the file stat-ed as `opened` before opening.
  Status CheckNotReplaced(const struct stat& opened) const;
  // Creates the directory of path_; creates a new store when path_ does not exist; refuses an
  // empty file and the WAL of a removed store.
  Status CheckOrCreateFile();
  // Creates a new store at path_ with its schema (built at path_ + ".new", then renamed).
  Status CreateStore();
  // Reads the meta table into `meta`; refuses a file that is not a readable bulkhead store.
  Status ReadMeta(std::map<std::string, std::string>& meta);
  // WAL mode, the durability setting and the WAL bounds.
  Status SetJournal();
  // Puts the schema in place and upgrades a file of schema `version` to kSchemaVersion.
  Status UpgradeSchema(int version);
  // Checks meta.commit_seq against the side file; `db_seq` is the database's number.
  Status CheckCommits(int64_t db_seq);
  Status QuickCheck();
  // Damaged job rows found: each one's id and what is wrong, the first few named for messages.
  struct DamagedRows {
    std::vector<std::pair<int64_t, std::string>> rows;
    std::string named;  // "id N (jid "..."): reason, ..." for the first few
    void Add(int64_t id, std::string_view jid, std::string problem);
    std::string Named() const;  // `named`, with ", ..." when there are more
  };
  struct JobsLoaded {
    size_t rows = 0, jobs = 0, queued = 0;
    size_t checked = 0, checked_queued = 0;  // payloads checked (JobRowProblem) at start
  };
  // Loads every jobs row: the queued ones cold (MemoryState::LoadColdJob, no payload read) unless
  // salvaging or `state` does not compact; the others whole, their payload checked. Then, when
  // queued rows loaded cold, checks the payloads of the first start_sample_ of them (by id).
  // Damaged rows refuse the start, or are moved aside when salvaging (see the damage notes above).
  Status LoadJobs(MemoryState& state);
  Status ScanJobs(MemoryState& state, DamagedRows& bad, JobsLoaded& loaded);
  Status CheckQueuedSample(DamagedRows& bad, JobsLoaded& loaded);
  // On the writer thread, for a row ReadJobs read: when it is damaged (JobRowProblem, or an
  // unknown `state`), moves it to damaged_jobs (logged; left in jobs only when the store is
  // degraded or the move fails, logged at error level) and returns true: it is answered as not
  // stored, never handed to a worker.
  // `check_payload` false: only the state is checked (a row this run wrote).
  bool SetAsideIfDamaged(int64_t id, int state, const JobRecord& job, bool check_payload);
  // Moves the rows `bad` (row id, reason) to the table damaged_jobs in one transaction;
  // `first_bad` names the first few for the log.
  Status MoveDamagedJobs(const std::vector<std::pair<int64_t, std::string>>& bad,
                         const std::string& first_bad);
  // Loads counters, paused queues, signing keys and host states; counts keys and hosts.
  Status LoadOtherTables(MemoryState& state, size_t& keys, size_t& hosts);
  // After a successful load: marks the run unclean, folds the WAL in, opens the side file and
  // starts the writer thread.
  Status StartRunning();
  // A FailedPrecondition naming path_, `problem` and `todo`.
  Status Damaged(const std::string& problem, const std::string& todo) const;
  // What to do about a damaged file: restore it, or recover what SQLite can still read.
  std::string RestoreOrRecoverTodo() const;
  // Closes the database without checkpointing (a refused file keeps its WAL as found).
  void Abandon();
  std::string CommitsPath() const { return path_ + "-commits"; }
  std::string RedoPath() const { return path_ + "-redo"; }
  // Removes the redo log's file (when nothing in it is needed: every record committed, or
  // durability "power", which has none); a failure is logged.
  void RemoveRedoFile();
  void WriterLoop();
  // On the writer, with mu_ held: takes what is queued (changes, reads, tasks) into `batch`, and
  // counts the answers it owes in answers_in_flight_.
  void TakeBatchLocked(std::vector<Pending>& batch);
  // What the caller of Schedule must do once mu_ is released.
  enum class Next { kNothing, kPostFlush, kWakeWriter };
  // With mu_ held, after the queue or the tasks changed: gives the connection an owner when it
  // has none and something waits (the loop through a posted flush, or the writer).
  Next ScheduleLocked();
  void Run(Next next);
  // With mu_ held: the loop may log changes now (see "Who commits").
  bool LoopMayLogLocked() const;
  // With mu_ held: what is queued needs the writer now (not only logged changes to commit).
  bool UrgentLocked() const;
  // The posted end-of-turn flush: logs the changes queued since the last one, when it may, and
  // answers them.
  void FlushOnLoop();
  // With mu_ held, on the loop: logs the loggable changes past logged_ as one record, marks what
  // pending_ now holds, and moves into `answers` those no owed answer comes before (the others
  // are held for the writer).
  void LogLocked(std::vector<std::function<void(Status)>>& answers);
  // On the loop, once the writer's answers arrived: gives the held answers no owed answer comes
  // before any more (they are durable), so that they need no hand-off to the writer.
  void AnswerHeldOnLoop();
  // On the writer, with mu_ held through `lock`: unless something is urgent, waits for more
  // logged changes until the open transaction's deadline (set to gather_delay_ from now when
  // none is open).
  void GatherLocked(std::unique_lock<std::mutex>& lock);
  // On the writer after a commit: tells the redo log what is committed, so that the loop may move
  // to a region whose records all are, and lets a loop that found it full log again.
  void FreeCommittedRedo();
  // Load: commits the redo log's records after meta.redo_seq (`db_redo_seq`).
  Status ReplayRedo(int64_t db_redo_seq);
  // With mu_ held: records the first failure `s` of `what` (a commit, a redo write), logged at
  // error level, and puts the log in degraded mode.
  void FailLocked(const Status& s, const char* what);
  // On the writer: writes `batch` into the open transaction, commits it when `commit_now`, when
  // the batch holds a change the loop did not log or when the transaction is due, runs the
  // batch's reads and posts every answer the batch owes, in order, in one closure. After a
  // failure (sticky: degraded mode) nothing more is written and unlogged changes get its error.
  void WriteAndAnswer(std::vector<Pending>& batch, bool commit_now);
  // Begins the transaction unless one is open; writes the changes of `batch` into it (updates of
  // rows the batch deletes left out), or keeps them for the commit (write_behind_: state
  // updates, records, counters). A failure rolls it back.
  Status WriteOpen(std::vector<Pending>& batch);
  // Commits the open transaction with what write_behind_ kept, meta.commit_seq and
  // meta.redo_seq; records the commit in the side file. A failure rolls it back. Ok when none is
  // open.
  Status CommitOpen();
  // Records commit_seq_ in the side file `path`-commits (once it is open).
  void RecordCommit();
  // On the writer: a failed write or commit `s` puts the log in degraded mode (FailLocked).
  void FailIfNot(const Status& s);
  // One transaction over `batch` (the redo replay's, Checkpoint's empty one); returns its Status.
  Status CommitBatch(std::vector<Pending>& batch);
  // Steps one of the transaction statements (BEGIN, COMMIT, ROLLBACK); its error names path_.
  Status StepTransaction(sqlite3_stmt* st);
  // On the writer: a PASSIVE checkpoint, then (when it emptied the WAL) the commit that restarts
  // the WAL, so that its header sync happens here.
  void Checkpoint();
  // SQLite's WAL hook (sqlite3_wal_hook): records the WAL's size after each commit.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int pages);
  // Columns 1 (jid), 3 .. 8 (queue, score, enqueued, reserve_for, jobtype, payload) of a jobs row
  // as the load scan and the reads select them (column 0 is the id, 2 the raw state).
  static void ReadJobColumns(sqlite3_stmt* st, JobRecord& job);
  // Reads the rows `ids` (those not stored, or damaged and set aside, as nullopt).
  Result<std::vector<std::optional<JobRecord>>> ReadRows(const std::vector<int64_t>& ids);
  // Reads the stored rows with ids first..last into rows[at + id - first] (their raw state into
  // states[...]) with one statement; the places of rows not stored are left as they are.
  Status ReadRange(int64_t first, int64_t last, std::vector<std::optional<JobRecord>>& rows,
                   std::vector<int>& states, size_t at);
  // Runs one step of every writer task (all of them with `stopping`: their last call).
  void RunWriterTasks(bool stopping);

  const std::string path_;
  const Store::Poster poster_;
  const std::string durability_;
  const bool loop_logs_;  // "process": the event loop logs changes (see "Who commits")
  const int64_t max_page_count_;
  const bool salvage_;
  size_t start_sample_ = kStartSample;
  std::chrono::microseconds gather_delay_ = kRedoGatherDelay;

  // Used by the writer thread only (and by Load before the thread starts).
  sqlite3* db_ = nullptr;
  SqliteStatements stmts_;
  int64_t commit_seq_ = 0;    // meta.commit_seq of the last commit
  int commits_fd_ = -1;       // `path`-commits
  bool wal_existed_ = false;  // `path`-wal existed before Load opened the database
  bool loaded_ = false;       // Load succeeded: Close marks the stop clean (unless a commit failed)
  // Rows from this id on were written by this run (their payloads were checked when pushed).
  int64_t first_run_id_ = INT64_MAX;

  // Used by the writer only: pages in the WAL after the last commit; the open transaction.
  int wal_pages_ = 0;
  bool txn_open_ = false;
  std::chrono::steady_clock::time_point txn_deadline_;  // when it is due to be committed
  size_t txn_changes_ = 0;                              // changes written into it
  int64_t txn_redo_seq_ = 0;                            // the last redo record it holds
  int64_t redo_committed_ = 0;      // the last redo record committed (every one before it is too)
  SqliteWriteBehind write_behind_;  // its writes that wait for the commit

  // Whether the writer has work (kWriter: woken, or busy until it finds the queue empty).
  enum class Owner { kNobody, kWriter };

  mutable std::mutex mu_;
  std::condition_variable cv_;    // the writer waits on it for owner_ == kWriter
  std::vector<Pending> pending_;  // guarded by mu_
  size_t pending_changes_ = 0;    // guarded by mu_: changes in pending_
  // Guarded by mu_: the first logged_ of pending_ went through the loop's flush (logged or not);
  // pending_ holds an answer the loop did not give (a read, an unlogged change, a held one), a
  // change the loop did not log, a logged change.
  size_t logged_ = 0;
  bool pending_owes_ = false;
  bool pending_reads_ = false;  // a read among them
  bool pending_unlogged_ = false;
  bool pending_logged_ = false;
  size_t settled_ = 0;  // guarded by mu_: a prefix of pending_ with no answer left to the loop
  std::unique_ptr<RedoLog> redo_;  // guarded by mu_ once running; "process" only
  int64_t redo_seq_ = 0;           // guarded by mu_: the last redo record's number
  bool gathering_ = false;         // guarded by mu_: the writer waits in GatherLocked
  bool redo_full_ = false;   // guarded by mu_: a record found no room, until a commit frees some
  uint64_t redo_fills_ = 0;  // guarded by mu_: how many times redo_full_ was set
  // Guarded by mu_: the full log's warning, at most once a minute (the count says how many).
  LogLimiter redo_full_log_{SystemClock::Instance(), std::chrono::minutes(1), 1};
  Owner owner_ = Owner::kNobody;  // guarded by mu_
  bool flush_posted_ = false;     // guarded by mu_: a FlushOnLoop is on its way
  bool stopping_ = false;         // guarded by mu_
  // Answers (durable callbacks, reads) the writer owes or posted that the loop has not run yet:
  // counted up by the writer when it takes a batch (under mu_), down by the loop.
  std::shared_ptr<std::atomic<int>> answers_in_flight_ = std::make_shared<std::atomic<int>>(0);
  // Set once when a commit or a redo write fails (failed_ after failure_, so that a reader that
  // sees failed_ finds failure_ set); never cleared.
  std::atomic<bool> failed_{false};
  Status failure_;  // guarded by mu_
  // Writer tasks (RunOnWriter): new_tasks_ guarded by mu_, tasks_ the writer thread's own.
  std::vector<SqliteWriterTask> new_tasks_;
  std::vector<SqliteWriterTask> tasks_;
  std::thread writer_;
  // Held while the log lives: a posted flush checks it before touching the log.
  std::shared_ptr<int> life_ = std::make_shared<int>(0);
  SqliteBackup backup_{path_, [this](SqliteWriterTask t) { RunOnWriter(std::move(t)); }, poster_};
};

}  // namespace bulkhead
