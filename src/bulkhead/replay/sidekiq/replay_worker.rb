# frozen_string_literal: true

# The application side of `bulkhead replay --pipeline sidekiq`: a real Sidekiq process
# (`sidekiq -r replay_worker.rb -c 15 -q default`, Debian's ruby-sidekiq 6.4) running the two
# kinds of job Mastodon runs on its `default` queue, shaped as Mastodon's workers are:
#
#   FeedInsertWorker (app/workers/feed_insert_worker.rb: `perform(status_id, id, type = 'home',
#     options = {})`, no sidekiq_options, so queue `default`): the timeline work. Here it burns
#     options['cpu_us'] of CPU (the 1-2 ms of a home-feed insert) and prints one line on stdout:
#       T <created_us> <start_us> <end_us>
#     (CLOCK_MONOTONIC microseconds; created_us is when the replay pushed the job).
#     A failed push prints "F <error class>" before Sidekiq takes the error for its retry.
#
#   Web::PushNotificationWorker (app/workers/web/push_notification_worker.rb: `retry: 5`; the 2019
#     version had no `queue:` option, so its jobs shared `default` with the timeline). Its
#     arguments stand in for the database rows Mastodon looks up: the subscription (endpoint and
#     keys) and the notification's payload. What it does depends on REPLAY_PUSH:
#       "inline"   the 2019 way: the Sidekiq thread POSTs to the push service with http.rb and
#                  waits, under Mastodon's timeouts (app/lib/request.rb: connect 5 s, write 10 s,
#                  read 10 s per operation); any error or non-2xx answer raises, so Sidekiq
#                  retries the job with its backoff (up to 5 times).
#       "bulkhead" handed over: the thread pushes a `webpush` job with Sidekiq::Client onto the
#                  queue bulkhead's Sidekiq bridge takes (REPLAY_BRIDGE_QUEUE), in
#                  docs/deliveries.md's form, and returns at once.
#
# Environment: REDIS_URL, REPLAY_PUSH, REPLAY_BRIDGE_QUEUE (default "bulkhead").
require 'http'
require 'json'
require 'sidekiq'

# redis-rb 4.8 warns at every BRPOP Sidekiq 6.4 makes (a positional timeout).
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

Sidekiq.configure_server do |config|
  config.redis = { url: ENV.fetch('REDIS_URL') }
  # stdout carries the timeline records: Sidekiq's own log goes to stderr.
  Sidekiq.logger = Sidekiq::Logger.new($stderr)
  Sidekiq.logger.level = Logger::WARN
end
Sidekiq.configure_client do |config|
  config.redis = { url: ENV.fetch('REDIS_URL') }
end

module Replay
  PUSH_MODE = ENV.fetch('REPLAY_PUSH')
  BRIDGE_QUEUE = ENV.fetch('REPLAY_BRIDGE_QUEUE', 'bulkhead')
  # app/lib/request.rb's timeouts (http.rb per-operation timeouts, seconds).
  TIMEOUT = { connect: 5, write: 10, read: 10 }.freeze
  OUT = $stdout
  OUT.sync = true
  OUT_LOCK = Mutex.new

  def self.now_us
    Process.clock_gettime(Process::CLOCK_MONOTONIC, :microsecond)
  end

  def self.record(line)
    OUT_LOCK.synchronize { OUT.write("#{line}\n") }
  end

  def self.burn_cpu(micros)
    stop = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :microsecond) + micros
    nil while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :microsecond) < stop
  end
end

class FeedInsertWorker
  include Sidekiq::Worker

  def perform(_status_id, _follower_id, _type = 'home', options = {})
    start = Replay.now_us
    Replay.burn_cpu(options.fetch('cpu_us', 1000))
    Replay.record("T #{options.fetch('created_us')} #{start} #{Replay.now_us}")
  end
end

module Web
  class PushNotificationWorker
    include Sidekiq::Worker

    sidekiq_options retry: 5

    def perform(subscription, notification)
      if Replay::PUSH_MODE == 'bulkhead'
        hand_over(subscription, notification)
      else
        post(subscription, notification)
      end
    rescue StandardError => e
      Replay.record("F #{e.class}") # the replay counts failed attempts as they happen
      raise
    end

    private

    # The 2019 way: this thread waits for the push service.
    def post(subscription, notification)
      response = HTTP.timeout(Replay::TIMEOUT.dup) # timeout() rewrites the hash it gets
                     .headers('TTL' => '172800', 'Urgency' => 'normal',
                              'Content-Type' => 'application/octet-stream')
                     .post(subscription.fetch('endpoint'), body: notification.fetch('payload'))
      response.flush
      raise "push service answered #{response.code}" unless response.status.success?
    end

    # Handed over to bulkhead: one Redis round trip, no thread waits on the push service.
    def hand_over(subscription, notification)
      Sidekiq::Client.push('class' => 'webpush', 'queue' => Replay::BRIDGE_QUEUE, 'retry' => 5,
                           'args' => [{ 'subscription' => subscription,
                                        'payload' => notification.fetch('payload'),
                                        'ttl' => 172_800, 'urgency' => 'normal',
                                        'context' => { 'notification_id' =>
                                                         notification.fetch('id') } }])
    end
  end
end

# The outcome jobs bulkhead's bridge writes back to `default` (docs/deliveries.md, "Outcome jobs as
# Sidekiq jobs"; its default sidekiq.*_class names). Mastodon's own would remove a gone
# subscription; here they only run, so that they neither fail nor fill Sidekiq's retry set.
module Bulkhead
  class WebpushGone
    include Sidekiq::Worker
    def perform(_outcome); end
  end

  class DeliveryDead
    include Sidekiq::Worker
    def perform(_outcome); end
  end

  class HostUnavailable
    include Sidekiq::Worker
    def perform(_outcome); end
  end

  class HostAvailable
    include Sidekiq::Worker
    def perform(_outcome); end
  end
end
