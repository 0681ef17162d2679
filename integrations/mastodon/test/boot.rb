# frozen_string_literal: true

# What `sidekiq -r` loads in the adapter's end-to-end tests (tests/mastodon/): the Mastodon
# stand-ins on the SQLite file MASTODON_DB, then the initializer as Rails loads it from
# config/initializers, then its to_prepare blocks. Sidekiq's Redis is REDIS_URL.
require_relative 'stand_ins'

Sidekiq.configure_server { |config| config.redis = { url: ENV.fetch('REDIS_URL') } }
Sidekiq.configure_client { |config| config.redis = { url: ENV.fetch('REDIS_URL') } }
MastodonStandIns.connect
MastodonStandIns.boot
