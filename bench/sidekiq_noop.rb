# No-op jobs end to end on a real Sidekiq (Debian's ruby-sidekiq), measured as bench_noop measures
# bulkhead: N jobs pushed first (Sidekiq::Client.push_bulk, 1000 per call, as bench_noop's PUSHB),
# then run to the last one by Sidekiq processes; jobs_per_second = N / (push time + run time).
#
#   ruby bench/sidekiq_noop.rb push N            pushes N NoopJob jobs onto queue:bench; prints
#                                                 "push_seconds S"
#   ruby bench/sidekiq_noop.rb run ID DIR C      one Sidekiq process (launcher in this process, C
#                                                 threads, queue "bench"); writes DIR/ready.ID once
#                                                 booted, starts fetching when DIR/go appears, and
#                                                 from when the queue is empty, rewrites
#                                                 DIR/status.ID ("COUNT LAST_COMPLETION") every
#                                                 5 ms until stopped (the script stops it once the
#                                                 counts add up to N)
#
# The Sidekiq processes are started and stopped by bench/run.d/11-noop-sidekiq.sh. REDIS_URL names
# the redis-server. The worker does nothing; its only cost beyond Sidekiq's own is a mutex-guarded
# count and a clock read per job, which is how the run's end is known exactly (Sidekiq's own
# processed counter reaches Redis once per heartbeat, every 5 s).
require "sidekiq"

class NoopJob
  include Sidekiq::Worker
  sidekiq_options queue: "bench", retry: false

  LOCK = Mutex.new
  @count = 0
  @last = 0.0
  class << self
    attr_reader :count, :last

    def record
      now = Process.clock_gettime(Process::CLOCK_REALTIME)
      LOCK.synchronize do
        @count += 1
        @last = now
      end
    end
  end

  def perform(_idx)
    NoopJob.record
  end
end

def push(n)
  start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  n.times.each_slice(1000) do |slice|
    Sidekiq::Client.push_bulk("class" => NoopJob, "args" => slice.map { |i| [i] })
  end
  puts format("push_seconds %.6f", Process.clock_gettime(Process::CLOCK_MONOTONIC) - start)
end

def wait_for(path)
  sleep 0.001 until File.exist?(path)
end

def run(id, dir, concurrency)
  require "sidekiq/cli"
  require "sidekiq/launcher"
  Sidekiq.configure_server do |config|
    config.options[:concurrency] = concurrency
    config.options[:queues] = ["bench"]
    config.logger.level = Logger::ERROR
  end
  Sidekiq.redis(&:ping) # connected before the clock starts
  Sidekiq.options[:lifecycle_events][:startup].each(&:call)
  File.write(File.join(dir, "ready.#{id}"), "")
  wait_for(File.join(dir, "go"))
  Sidekiq::Launcher.new(Sidekiq.options).run
  status = File.join(dir, "status.#{id}")
  loop do
    sleep 0.005
    next unless Sidekiq.redis { |c| c.llen("queue:bench") }.zero?
    File.write("#{status}.tmp", format("%d %.6f\n", NoopJob.count, NoopJob.last))
    File.rename("#{status}.tmp", status)
  end
end

case ARGV[0]
when "push" then push(Integer(ARGV[1]))
when "run" then run(ARGV[1], ARGV[2], Integer(ARGV[3]))
else abort "usage: sidekiq_noop.rb push N | run ID DIR CONCURRENCY"
end
