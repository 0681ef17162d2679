# frozen_string_literal: true

# The three Mastodon workers the initializer decorates, in the shape MASTODON_SHAPE names
# (stand_ins.rb): sidekiq_options, constants, perform's checks and the private methods the
# initializer calls are Mastodon's; the request a worker would send itself is recorded instead
# (MastodonStandIns.record_sent).

# app/workers/web/push_notification_worker.rb
class Web::PushNotificationWorker
  include Sidekiq::Worker
  include RoutingHelper

  sidekiq_options queue: 'push', retry: 5

  # 4.4: a duration (the stale check and generates_token_for use it); before: a string.
  TTL = MASTODON_SHAPE == 'aesgcm' ? 48.hours.to_i.to_s : 48.hours
  URGENCY = 'normal'

  if MASTODON_SHAPE == 'changed'
    def perform(subscription_id, notification_id, _extra)
      MastodonStandIns.record_sent('Web::PushNotificationWorker', [subscription_id, notification_id])
    end
  else
    def perform(subscription_id, notification_id)
      @subscription = Web::PushSubscription.find(subscription_id)
      @notification = Notification.find(notification_id)
      return if TTL.respond_to?(:ago) && @notification.updated_at < TTL.ago
      return unless @notification.activity.present? && @subscription.pushable?(@notification)

      MastodonStandIns.record_sent('Web::PushNotificationWorker', [@subscription.endpoint, push_notification_json])
    rescue ActiveRecord::RecordNotFound
      true
    end
  end

  private

  if MASTODON_SHAPE == '4.4'
    def web_push_request
      @web_push_request ||= WebPushRequest.new(@subscription)
    end

    def subscription_url
      api_web_push_subscription_url(id: @subscription.generate_token_for(:unsubscribe))
    end
  end

  # What Web::NotificationSerializer (app/serializers/web/notification_serializer.rb) renders,
  # in the subscription's locale: access_token, preferred_locale, notification_id,
  # notification_type, icon, title, body.
  def push_notification_json
    I18n.with_locale(@subscription.locale.presence || I18n.default_locale) do
      JSON.generate(access_token: "token-#{@subscription.access_token_id}", preferred_locale: I18n.locale.to_s,
                    notification_id: @notification.id.to_s, notification_type: @notification.type.to_s,
                    icon: "#{BASE}/avatars/#{@notification.from_account.id}.png",
                    title: I18n.t("stand_in.#{@notification.type}", name: @notification.from_account.username),
                    body: 'Hello ✓')
    end
  end
end

I18n.backend.store_translations(:en, stand_in: { mention: '%{name} mentioned you' })
I18n.backend.store_translations(:fr, stand_in: { mention: '%{name} vous a mentionné' })
I18n.available_locales = %i(en fr)

# app/workers/activitypub/delivery_worker.rb (4.3, 4.4)
class ActivityPub::DeliveryWorker
  include Sidekiq::Worker
  include RoutingHelper

  sidekiq_options queue: 'push', retry: 16, dead: false

  def perform(json, source_account_id, inbox_url, options = {})
    @options = options.with_indifferent_access
    return unless @options[:bypass_availability] || DeliveryFailureTracker.available?(inbox_url)

    @json = json
    @source_account = Account.find(source_account_id)
    @inbox_url = inbox_url
    sync = @options[:synchronize_followers] ? synchronization_header : nil
    MastodonStandIns.record_sent('ActivityPub::DeliveryWorker', [inbox_url, json, sync, @options[:sign_with].present?])
  end

  private

  # The Collection-Synchronization value (FEP-8fcf) the worker's build_request adds.
  def synchronization_header
    "collectionId=\"#{account_followers_url(@source_account)}\", digest=\"#{@source_account.remote_followers_hash(@inbox_url)}\", " \
      "url=\"#{account_followers_synchronization_url(@source_account)}\""
  end
end

module Webhooks
end

# app/workers/webhooks/delivery_worker.rb
class Webhooks::DeliveryWorker
  include Sidekiq::Worker

  sidekiq_options queue: 'push', retry: 16, dead: false

  def perform(webhook_id, body)
    @webhook = Webhook.find(webhook_id)
    @body = body
    MastodonStandIns.record_sent('Webhooks::DeliveryWorker', [@webhook.url, body, signature])
  rescue ActiveRecord::RecordNotFound
    true
  end

  private

  # X-Hub-Signature's value: HMAC-SHA256 of the body with the webhook's secret, hex.
  def signature
    OpenSSL::HMAC.hexdigest('SHA256', @webhook.secret, @body)
  end
end

module Admin
end

# app/lib/admin/system_check.rb: the admin dashboard's checks, each failing one a message.
class Admin::SystemCheck
  def self.perform(_current_user)
    []
  end
end

# app/lib/admin/system_check/message.rb
class Admin::SystemCheck::Message
  attr_reader :key, :value, :action

  def initialize(key, value = nil, action = nil)
    @key = key
    @value = value
    @action = action
  end
end
