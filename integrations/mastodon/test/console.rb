# frozen_string_literal: true

# The tests' handle on the stand-in database (MASTODON_DB, its tables made by boot.rb) and on
# Mastodon's Sidekiq (REDIS_URL). Inserts first, then enqueues.
# Reads one JSON document on stdin and prints one on stdout:
#   {"insert": {"TABLE": [{column: value}, ...]}}     inserts rows, prints {"ids": {"TABLE": [id...]}}
#   {"perform_async": [["Worker::Class", arg...], ...]}  enqueues Mastodon jobs as Mastodon does
require_relative 'stand_ins'

Sidekiq.configure_client { |config| config.redis = { url: ENV.fetch('REDIS_URL'), size: 1 } }
Sidekiq.logger.level = Logger::WARN
MastodonStandIns.connect
doc = JSON.parse($stdin.read)
out = {}
(doc['insert'] || {}).each do |table, rows|
  klass = Class.new(ApplicationRecord) { self.table_name = table; self.inheritance_column = nil }
  (out['ids'] ||= {})[table] = rows.map { |row| klass.create!(row).id }
end
(doc['perform_async'] || []).each do |name, *args|
  (out['jids'] ||= []) << Object.const_get(name).perform_async(*args)
end
puts JSON.generate(out)
