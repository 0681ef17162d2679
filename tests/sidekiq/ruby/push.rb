# Pushes jobs as a Ruby application does, with Sidekiq::Client (Debian's ruby-sidekiq), to the
# Redis in REDIS_URL. Reads one JSON document from stdin:
#   {"push": [item, ...], "push_bulk": [items, ...]}
# each item as Sidekiq::Client.push takes it ({"class", "queue", "args", "retry", ...}; push_bulk:
# "args" is an array of argument arrays). Prints {"jids": [...]} on stdout.
require 'json'
require 'sidekiq'

Sidekiq.configure_client do |config|
  config.redis = { url: ENV.fetch('REDIS_URL'), size: 1 }
end
Sidekiq.logger.level = Logger::WARN

doc = JSON.parse($stdin.read)
jids = []
(doc['push'] || []).each { |item| jids << Sidekiq::Client.push(item) }
(doc['push_bulk'] || []).each { |items| jids.concat(Sidekiq::Client.push_bulk(items)) }
puts JSON.generate('jids' => jids)
