# frozen_string_literal: true

# Stand-ins for the parts of Mastodon the initializer (../bulkhead.rb) touches, with the names and
# interfaces of Mastodon's own classes (mastodon/mastodon; each class cites the file it mirrors)
# and just enough behaviour for the tests: real ActiveRecord models on SQLite (Debian's
# ruby-activerecord and ruby-sqlite3; Mastodon runs the same API on PostgreSQL), ActiveSupport for
# the durations, `present?` and with_indifferent_access Mastodon's code uses, a real Sidekiq.
# Where a Mastodon worker would make its HTTP request itself, the stand-in records that it did
# (Redis list test:mastodon_sent) instead: the tests check that it never does once the initializer
# is installed, and that it still does when the initializer refuses the shape.
#
# MASTODON_SHAPE picks the shape of the workers:
#   4.4      (default) Web::PushNotificationWorker with standard (aes128gcm) subscriptions,
#            Unsubscribe-URL and the 48 h stale check (4.4)
#   aesgcm   the worker before standard encryption: aesgcm only, TTL a string, no stale check, no
#            Unsubscribe-URL
#   changed  a perform that takes another argument: a shape the initializer must refuse
# MASTODON_DB is the SQLite file; REDIS_URL the Redis of Sidekiq and of DeliveryFailureTracker.
require 'active_record'
require 'active_support/all'
require 'addressable/uri'
require 'json'
require 'logger'
require 'openssl'
require 'ostruct'
require 'sidekiq'

# redis-rb 4.8 warns at every BRPOP Sidekiq 6.4 makes (a positional timeout).
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

MASTODON_SHAPE = ENV.fetch('MASTODON_SHAPE', '4.4')

# Rails (railties): the logger, the cache, x settings and to_prepare, which Rails runs once the
# application's code can be loaded (MastodonStandIns.boot runs them here).
module Rails
  class << self
    attr_writer :logger

    def logger
      @logger ||= Logger.new($stdout)
    end

    def application
      @application ||= OpenStruct.new(config: RailsConfig.new)
    end

    def configuration
      application.config
    end

    def cache
      @cache ||= ActiveSupport::Cache::MemoryStore.new
    end

    # Sidekiq's CLI names it in its boot line (Mastodon 4.3 runs Rails 7.1).
    def version
      '7.1'
    end
  end

  class RailsConfig
    def x
      @x ||= OpenStruct.new
    end

    def to_prepare(&block)
      (@to_prepare ||= []) << block
    end

    def run_to_prepare
      (@to_prepare || []).each(&:call)
    end
  end
end

module MastodonStandIns
  module_function

  def connect(database = ENV.fetch('MASTODON_DB'))
    ActiveRecord::Base.establish_connection(adapter: 'sqlite3', database: database, pool: 20, timeout: 10_000)
    ActiveRecord::Base.logger = nil
  end

  # The columns the stand-ins use, as Mastodon's db/schema.rb names them.
  def create_schema
    ActiveRecord::Schema.verbose = false
    ActiveRecord::Schema.define do
      create_table(:users, if_not_exists: true) { |t| t.string :locale }
      create_table(:accounts, if_not_exists: true) do |t|
        t.string :username
        t.text :private_key
        t.text :public_key
      end
      create_table(:notifications, if_not_exists: true) do |t|
        t.string :type
        t.bigint :account_id
        t.bigint :from_account_id
        t.bigint :activity_id
        t.timestamps
      end
      create_table(:web_push_subscriptions, if_not_exists: true) do |t|
        t.string :endpoint
        t.string :key_p256dh
        t.string :key_auth
        t.text :data
        t.boolean :standard, default: false, null: false
        t.bigint :user_id
        t.bigint :access_token_id
      end
      create_table(:unavailable_domains, if_not_exists: true) { |t| t.string :domain, index: { unique: true } }
      create_table(:webhooks, if_not_exists: true) do |t|
        t.string :url
        t.string :secret
      end
    end
  end

  # What a worker's own request would have been: recorded instead of sent.
  def record_sent(worker, detail)
    Sidekiq.redis { |c| c.call('RPUSH', 'test:mastodon_sent', JSON.generate('worker' => worker, 'detail' => detail)) }
  end

  # Loads the initializer as Rails does (config/initializers), then runs the to_prepare blocks.
  def boot(initializer = File.expand_path('../bulkhead.rb', __dir__))
    load initializer
    Rails.application.config.run_to_prepare
  end
end

# app/lib/redisable.rb: `redis`, Mastodon's connection (here one per thread on REDIS_URL).
module Redisable
  def redis
    Thread.current[:stand_in_redis] ||= Redis.new(url: ENV.fetch('REDIS_URL'))
  end
end

# app/models/application_record.rb
class ApplicationRecord < ActiveRecord::Base
  self.abstract_class = true
end

# app/models/user.rb: the locale pushes are rendered in.
class User < ApplicationRecord
end

# app/models/account.rb: keypair (the account's RSA key pair, from its PEM columns) and, from
# app/models/concerns/account/interactions.rb, remote_followers_hash (the follower-set digest
# Collection-Synchronization carries; here a digest of the inbox's host alone).
class Account < ApplicationRecord
  def keypair
    @keypair ||= OpenSSL::PKey::RSA.new(private_key || public_key)
  end

  def remote_followers_hash(url)
    Digest::SHA256.hexdigest(Addressable::URI.parse(url).normalized_host.to_s)
  end

  def following?(_other)
    false
  end
end

# app/models/notification.rb: `type` is a symbol (`inheritance_column` off, as there); `activity`
# is the polymorphic target (here present while activity_id is set).
class Notification < ApplicationRecord
  self.inheritance_column = nil
  belongs_to :account
  belongs_to :from_account, class_name: 'Account'

  def type
    super&.to_sym
  end

  def activity
    activity_id && OpenStruct.new(id: activity_id)
  end
end

module Web
end

# app/models/web/push_subscription.rb (4.4): validations, `locale` from its user, pushable? from
# the subscription's policy and alerts, generate_token_for(:unsubscribe) (Rails 7.1's
# generates_token_for; here an HMAC of the id).
class Web::PushSubscription < ApplicationRecord
  self.table_name = 'web_push_subscriptions'
  belongs_to :user
  serialize :data, JSON

  validates :endpoint, presence: true
  validates :key_p256dh, presence: true
  validates :key_auth, presence: true

  delegate :locale, to: :user

  def pushable?(notification)
    policy_allows_notification?(notification) && alert_enabled_for_notification_type?(notification)
  end

  def generate_token_for(purpose)
    OpenSSL::HMAC.hexdigest('SHA256', 'stand-in secret', "#{purpose}:#{id}")
  end

  private

  def alert_enabled_for_notification_type?(notification)
    ActiveModel::Type::Boolean.new.cast(data&.dig('alerts', notification.type.to_s))
  end

  def policy_allows_notification?(notification)
    case data&.dig('policy')
    when nil, 'all' then true
    when 'none' then false
    when 'followed' then notification.account.following?(notification.from_account)
    when 'follower' then notification.from_account.following?(notification.account)
    end
  end
end

# app/models/unavailable_domain.rb: one row per unavailable domain; clears the cached map
# DeliveryFailureTracker reads.
class UnavailableDomain < ApplicationRecord
  validates :domain, presence: true, uniqueness: true
  after_commit { Rails.cache.delete('unavailable_domains') }
end

# app/models/webhook.rb
class Webhook < ApplicationRecord
end

# app/lib/delivery_failure_tracker.rb: failure days per host in the Redis set
# exhausted_deliveries:<host>; at 7 days the host is an UnavailableDomain; a success clears both.
class DeliveryFailureTracker
  include Redisable

  FAILURE_DAYS_THRESHOLD = 7

  def initialize(url_or_host)
    @host = url_or_host.start_with?('https://', 'http://') ? Addressable::URI.parse(url_or_host).normalized_host : url_or_host
  end

  def track_failure!
    redis.sadd(key, Time.now.utc.strftime('%Y%m%d'))
    UnavailableDomain.create(domain: @host) if days >= FAILURE_DAYS_THRESHOLD
  end

  def track_success!
    redis.del(key)
    UnavailableDomain.find_by(domain: @host)&.destroy
  end

  def days
    redis.scard(key) || 0
  end

  def available?
    !UnavailableDomain.where(domain: @host).exists?
  end

  def self.available?(url)
    new(url).available?
  end

  private

  def key
    "exhausted_deliveries:#{@host}"
  end
end

# app/helpers/routing_helper.rb: the URL helpers the workers use (Rails routes on LOCAL_DOMAIN).
module RoutingHelper
  BASE = 'https://social.example'

  def account_followers_url(account)
    "#{BASE}/users/#{account.username}/followers"
  end

  def account_followers_synchronization_url(account)
    "#{BASE}/users/#{account.username}/followers_synchronization"
  end

  def api_web_push_subscription_url(id:)
    "#{BASE}/api/web/push_subscriptions/#{id}"
  end
end

module ActivityPub
end

# app/lib/activitypub/tag_manager.rb: an account's URI and its key's (`#main-key`).
class ActivityPub::TagManager
  include Singleton
  include RoutingHelper

  def uri_for(account)
    "#{BASE}/users/#{account.username}"
  end

  def key_uri_for(account)
    "#{uri_for(account)}#main-key"
  end
end

# app/lib/web_push_request.rb (4.4): which encryption a subscription takes.
class WebPushRequest
  def initialize(subscription)
    @subscription = subscription
  end

  def legacy
    !@subscription.standard
  end
end

require_relative 'stand_in_workers'
