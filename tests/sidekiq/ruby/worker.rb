# The application's side of the outcome jobs: Sidekiq workers of the classes the bridge writes
# (its default sidekiq.*_class names), run by a real `sidekiq -r ./worker.rb -q default`. Each
# records what it got, as {"class", "jid", "args"}, on the Redis list test:outcomes, which the
# test reads.
require 'json'
require 'sidekiq'

Sidekiq.configure_server do |config|
  config.redis = { url: ENV.fetch('REDIS_URL') }
end

module Bulkhead
  module Recording
    def perform(outcome)
      Sidekiq.redis do |conn|
        conn.rpush('test:outcomes', JSON.generate('class' => self.class.name, 'jid' => jid,
                                                  'args' => [outcome]))
      end
    end
  end

  class WebpushGone
    include Sidekiq::Worker
    include Recording
  end

  class DeliveryDead
    include Sidekiq::Worker
    include Recording
  end

  class HostUnavailable
    include Sidekiq::Worker
    include Recording
  end

  class HostAvailable
    include Sidekiq::Worker
    include Recording
  end
end
