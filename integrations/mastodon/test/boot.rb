# frozen_string_literal: true

# What `sidekiq -r` loads in the adapter's end-to-end tests (tests/mastodon/): the Mastodon
# stand-ins on the SQLite file MASTODON_DB (its tables created if missing), then the initializer as
# Rails loads it from config/initializers, then its to_prepare blocks. Sidekiq's Redis is
# REDIS_URL. The log (Rails.logger: stdout) is written at once, for the tests to read.
require_relative 'stand_ins'

Sidekiq.configure_server { |config| config.redis = { url: ENV.fetch('REDIS_URL') } }
Sidekiq.configure_client { |config| config.redis = { url: ENV.fetch('REDIS_URL') } }
$stdout.sync = true
MastodonStandIns.connect
MastodonStandIns.create_schema
MastodonStandIns.boot
# Scheduled jobs (the refusal checks a window later) looked for every second or so from the start,
# instead of every 5 s (times the processes) after a first wait of 10 to 15 s (Sidekiq 6.4,
# lib/sidekiq/scheduled.rb).
Sidekiq.options[:poll_interval_average] = 1
