# frozen_string_literal: true

# bulkhead for Mastodon: drop this file into Mastodon's config/initializers/ (as bulkhead.rb) and
# restart Mastodon's processes. Web Push notifications, ActivityPub deliveries and admin webhooks
# are then handed to bulkhead (through its Sidekiq bridge, as `webpush`, `activitypub` and `webhook`
# jobs on the Sidekiq queue bulkhead takes) instead of being sent from Sidekiq threads, so that a
# slow push service or inbox holds a socket in bulkhead, never a Sidekiq thread. Deleting the file
# and restarting gives Mastodon back its own workers. The admin's guide: docs/mastodon.md in
# bulkhead's repository.
#
# What it does, in Mastodon's own terms (each step keeps what Mastodon's worker does; the files
# cited are Mastodon's, mastodon/mastodon):
#   - Web::PushNotificationWorker (app/workers/web/push_notification_worker.rb): the same checks
#     (the notification not older than its TTL, the activity still there, the subscription's
#     policy and alerts, invalid subscriptions destroyed where that version does), the payload the
#     worker renders itself in the subscription's locale, then a `webpush` job: aes128gcm for
#     `standard` subscriptions and aesgcm for the others (app/lib/web_push_request.rb; versions
#     without the flag: aesgcm), TTL and Urgency of the worker, Unsubscribe-URL where that version
#     sends one. Gone subscriptions are destroyed where the worker destroys them (a 4xx but 408 and
#     429), from the outcome jobs bulkhead writes back, except a burst of 401/403 from one push
#     service: a configuration problem (a wrong VAPID key), reported, nothing destroyed.
#   - ActivityPub::DeliveryWorker (app/workers/activitypub/delivery_worker.rb): the availability
#     check, then an `activitypub` job with the body bytes Mastodon would send, the signing
#     account's key id (its private key registered once through bulkhead's keys API, never in a
#     job) and Collection-Synchronization when the worker would send it. Outcomes feed
#     DeliveryFailureTracker and UnavailableDomain (app/lib/delivery_failure_tracker.rb).
#   - Webhooks::DeliveryWorker (app/workers/webhooks/delivery_worker.rb): a `webhook` job signed
#     as the worker signs (X-Hub-Signature: sha256=HMAC-SHA256(secret, body)).
# At boot it checks that these classes have the shape it was written for (Mastodon 4.3 and
# later); if one does not, it changes nothing and logs one line saying why.
#
# Settings (environment variables of Mastodon's processes):
#   BULKHEAD_QUEUE            the Sidekiq queue bulkhead's [sidekiq] queues take (bulkhead)
#   BULKHEAD_URL              bulkhead's HTTP API, for the signing keys (http://127.0.0.1:7420)
#   BULKHEAD_PASSWORD         bulkhead's password (sent as Authorization: Bearer), if it has one
#   BULKHEAD_CA_FILE          CA bundle for an https BULKHEAD_URL with a private CA
#   BULKHEAD_DELIVERIES       which deliveries go to bulkhead: webpush,activitypub,webhook (all),
#                             a subset, or "none" (the initializer then changes nothing)
#   BULKHEAD_REFUSAL_BURST    401/403 answers from one push service within the window that make
#                             a burst (10)
#   BULKHEAD_REFUSAL_WINDOW   that window, in seconds (600); a single refusal is acted on once a
#                             window has passed without a burst
require 'digest'
require 'erb'
require 'json'
require 'net/http'
require 'openssl'
require 'uri'

module Bulkhead
  # The settings above, read when used (so a test may change them).
  module Settings
    DELIVERIES = %w(webpush activitypub webhook).freeze

    module_function

    def queue
      ENV.fetch('BULKHEAD_QUEUE', 'bulkhead')
    end

    def url
      ENV.fetch('BULKHEAD_URL', 'http://127.0.0.1:7420')
    end

    def password
      ENV['BULKHEAD_PASSWORD'].to_s
    end

    def ca_file
      ENV['BULKHEAD_CA_FILE'].to_s
    end

    def deliveries
      text = ENV.fetch('BULKHEAD_DELIVERIES', DELIVERIES.join(','))
      return [] if text.strip == 'none'

      text.split(',').map(&:strip) & DELIVERIES
    end

    def refusal_burst
      Integer(ENV.fetch('BULKHEAD_REFUSAL_BURST', '10'))
    end

    def refusal_window
      Integer(ENV.fetch('BULKHEAD_REFUSAL_WINDOW', '600'))
    end
  end

  def self.logger
    defined?(Rails) && Rails.respond_to?(:logger) && Rails.logger ? Rails.logger : Sidekiq.logger
  end

  # Pushes a delivery job onto the bridge's Sidekiq queue with the retry options of the Mastodon
  # worker it stands for (Sidekiq::Client.push; the bridge maps retry and dead, docs/deliveries.md).
  module Jobs
    module_function

    def push(worker_class, jobtype, args)
      options = worker_class.get_sidekiq_options
      item = { 'class' => jobtype, 'queue' => Settings.queue, 'args' => [args] }
      item['retry'] = options['retry'] if options.key?('retry')
      item['dead'] = options['dead'] if options.key?('dead')
      Sidekiq::Client.push(item) || raise("bulkhead: a client middleware dropped the #{jobtype} job")
    end
  end

  # The signing keys bulkhead holds (PUT /api/keys/<key id>, README "ActivityPub signing keys"): an
  # account's private key is registered before its first job and again when it changes (a key
  # rotation), remembered for an hour in this process and in Redis (for every Sidekiq process).
  module SigningKeys
    REMEMBER_SECONDS = 3600
    REDIS_PREFIX = 'bulkhead:signing_key:'
    @known = {}
    @lock = Mutex.new

    class << self
      def register(key_id, pem)
        fingerprint = Digest::SHA256.hexdigest(pem)
        return if remembered?(key_id, fingerprint)

        put(key_id, pem) unless Sidekiq.redis { |c| c.call('GET', REDIS_PREFIX + key_id) } == fingerprint
        Sidekiq.redis { |c| c.call('SET', REDIS_PREFIX + key_id, fingerprint, 'EX', REMEMBER_SECONDS) }
        @lock.synchronize { @known[key_id] = [fingerprint, now + REMEMBER_SECONDS] }
      end

      def forget_all
        @lock.synchronize { @known.clear }
      end

      private

      def remembered?(key_id, fingerprint)
        known, until_time = @lock.synchronize { @known[key_id] }
        known == fingerprint && until_time > now
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      def put(key_id, pem)
        uri = URI("#{Settings.url.chomp('/')}/api/keys/#{ERB::Util.url_encode(key_id)}")
        request = Net::HTTP::Put.new(uri)
        request['Authorization'] = "Bearer #{Settings.password}" unless Settings.password.empty?
        request['Content-Type'] = 'application/x-pem-file'
        request.body = pem
        response = http(uri).request(request)
        return if %w(200 201).include?(response.code)

        raise "bulkhead: registering the signing key #{key_id} at #{uri.host}:#{uri.port} answered " \
              "#{response.code}: #{response.body.to_s[0, 200]}"
      end

      def http(uri)
        http = Net::HTTP.new(uri.host, uri.port)
        http.use_ssl = uri.scheme == 'https'
        http.ca_file = Settings.ca_file unless Settings.ca_file.empty?
        http.open_timeout = 5
        http.read_timeout = 10
        http.write_timeout = 10
        http
      end
    end
  end

  # What the Mastodon classes look like: the shape this file relies on (problems) and the features
  # of this version that decide what a job carries.
  module Shape
    module_function

    # The reasons the running Mastodon does not have the shape this file was written for; empty
    # when it has. `deliveries`: the workers to check.
    def problems(deliveries)
      deliveries.flat_map { |d| send("#{d}_problems") } + outcome_problems
    end

    def webpush_problems
      worker = constant('Web::PushNotificationWorker')
      return ['Web::PushNotificationWorker is missing'] if worker.nil?

      out = []
      out << arity(worker, :perform, 2, 'perform(subscription_id, notification_id)')
      out << private_method(worker, :push_notification_json)
      out << 'Web::PushNotificationWorker::TTL or URGENCY is missing' unless worker.const_defined?(:TTL) && worker.const_defined?(:URGENCY)
      out << needs_method(constant('Web::PushSubscription'), 'Web::PushSubscription', :pushable?)
      out << 'Notification is missing' if constant('Notification').nil?
      out.compact
    end

    def activitypub_problems
      worker = constant('ActivityPub::DeliveryWorker')
      return ['ActivityPub::DeliveryWorker is missing'] if worker.nil?

      out = []
      out << arity(worker, :perform, -4, 'perform(json, source_account_id, inbox_url, options = {})')
      out << private_method(worker, :synchronization_header)
      out << needs_method(constant('Account'), 'Account', :keypair)
      tag_manager = constant('ActivityPub::TagManager')
      out << 'ActivityPub::TagManager#key_uri_for is missing' unless tag_manager&.method_defined?(:key_uri_for)
      out.compact
    end

    def webhook_problems
      worker = constant('Webhooks::DeliveryWorker')
      return ['Webhooks::DeliveryWorker is missing'] if worker.nil?

      [arity(worker, :perform, 2, 'perform(webhook_id, body)'), private_method(worker, :signature),
       constant('Webhook') ? nil : 'Webhook is missing'].compact
    end

    # What the outcome jobs need.
    def outcome_problems
      out = []
      tracker = constant('DeliveryFailureTracker')
      unless tracker && %i(track_failure! track_success!).all? { |m| tracker.method_defined?(m) } && tracker.respond_to?(:available?)
        out << 'DeliveryFailureTracker#track_failure!, #track_success! or .available? is missing'
      end
      out << 'UnavailableDomain is missing' if constant('UnavailableDomain').nil?
      out
    end

    # Features of the running version's Web::PushNotificationWorker.
    def webpush_features(worker)
      {
        # 4.4: `standard` subscriptions get aes128gcm (web_push_request.legacy), the others aesgcm
        standard: worker.private_method_defined?(:web_push_request) && constant('WebPushRequest')&.method_defined?(:legacy),
        # 4.4: the Unsubscribe-URL header (subscription_url)
        unsubscribe_url: worker.private_method_defined?(:subscription_url),
        # TTL as a duration: pushes for notifications older than it are dropped (`TTL.ago`)
        stale_check: worker::TTL.respond_to?(:ago),
        # later versions destroy subscriptions that fail validation before pushing
        invalid_cleanup: source_of(worker, :perform).include?('@subscription.valid?'),
      }
    end

    def constant(name)
      Object.const_get(name)
    rescue NameError
      nil
    end

    def arity(klass, name, expected, shown)
      return "#{klass}##{name} is missing" unless klass.method_defined?(name)

      actual = klass.instance_method(name).arity
      actual == expected ? nil : "#{klass}##{name} takes #{describe_arity(actual)}, expected #{shown}"
    end

    def describe_arity(arity)
      arity.negative? ? "at least #{-arity - 1} arguments" : "#{arity} arguments"
    end

    def private_method(klass, name)
      klass.private_method_defined?(name) ? nil : "#{klass}##{name} is missing"
    end

    def needs_method(klass, shown, name)
      klass&.method_defined?(name) ? nil : "#{shown}##{name} is missing"
    end

    def source_of(klass, name)
      file, = klass.instance_method(name).source_location
      file ? File.read(file) : ''
    rescue SystemCallError
      ''
    end
  end

  # Prepended to Web::PushNotificationWorker: the worker's perform (app/workers/web/
  # push_notification_worker.rb), with the request replaced by a `webpush` job.
  module WebPushWorker
    def perform(subscription_id, notification_id)
      @subscription = Web::PushSubscription.find(subscription_id)
      @notification = Notification.find(notification_id)
      features = Bulkhead::Mastodon.webpush_features

      return if features[:stale_check] && @notification.updated_at < self.class::TTL.ago
      return @subscription.destroy! if features[:invalid_cleanup] && !@subscription.valid?
      # Polymorphically associated activity could have been deleted in the meantime (Mastodon's
      # own comment): checked again before pushing.
      return unless @notification.activity.present? && @subscription.pushable?(@notification)

      Bulkhead::Jobs.push(self.class, 'webpush', bulkhead_webpush_args(features))
    rescue ActiveRecord::RecordNotFound
      true
    end

    private

    def bulkhead_webpush_args(features)
      standard = features[:standard] && !web_push_request.legacy
      args = {
        'subscription' => { 'endpoint' => @subscription.endpoint,
                            'keys' => { 'p256dh' => @subscription.key_p256dh, 'auth' => @subscription.key_auth } },
        'payload' => push_notification_json,
        'content_encoding' => standard ? 'aes128gcm' : 'aesgcm',
        'ttl' => self.class::TTL.to_i,
        'urgency' => self.class::URGENCY,
        'context' => { 'web_push_subscription_id' => @subscription.id, 'notification_id' => @notification.id },
      }
      args['unsubscribe_url'] = subscription_url if features[:unsubscribe_url]
      args
    end
  end

  # Prepended to ActivityPub::DeliveryWorker (app/workers/activitypub/delivery_worker.rb).
  module ActivityPubWorker
    def perform(json, source_account_id, inbox_url, options = {})
      @options = options.with_indifferent_access
      return unless @options[:bypass_availability] || DeliveryFailureTracker.available?(inbox_url)
      # A key rotation's Update is signed with the old key (`sign_with`) under the same key id as
      # every other delivery of the account: bulkhead holds one key per key id, so Mastodon
      # sends that one itself, as before.
      return super if @options[:sign_with].present?

      @json = json
      @source_account = Account.find(source_account_id)
      @inbox_url = inbox_url
      keypair = @source_account.keypair
      return super unless keypair.private?

      key_id = ActivityPub::TagManager.instance.key_uri_for(@source_account)
      Bulkhead::SigningKeys.register(key_id, keypair.to_pem)
      Bulkhead::Jobs.push(self.class, 'activitypub', bulkhead_activitypub_args(key_id))
    end

    private

    def bulkhead_activitypub_args(key_id)
      args = { 'inbox' => @inbox_url, 'activity' => @json, 'key_id' => key_id,
               'context' => { 'account_id' => @source_account.id } }
      # The worker's own condition for the header (build_request).
      if ENV['DISABLE_FOLLOWERS_SYNCHRONIZATION'] != 'true' && @options[:synchronize_followers]
        args['headers'] = { 'Collection-Synchronization' => synchronization_header }
      end
      args
    end
  end

  # Prepended to Webhooks::DeliveryWorker (app/workers/webhooks/delivery_worker.rb).
  module WebhookWorker
    def perform(webhook_id, body)
      @webhook = Webhook.find(webhook_id)
      @body = body
      headers = { 'Content-Type' => 'application/json', 'X-Hub-Signature' => "sha256=#{signature}" }
      Bulkhead::Jobs.push(self.class, 'webhook', { 'url' => @webhook.url, 'method' => 'POST', 'headers' => headers,
                                                  'body' => body, 'context' => { 'webhook_id' => @webhook.id } })
    rescue ActiveRecord::RecordNotFound
      true
    end
  end

  # A 401 or 403 from a push service means the subscription refused our VAPID signature. One such
  # answer is a dead subscription (Mastodon destroys it); a burst of them from one push service is
  # this server's VAPID key not being the one the subscriptions were made with, and destroying
  # them would throw away every user's push setting. So a refusal is counted per push service in
  # Redis (every Sidekiq process shares the count) and decided a window later: kept if its push
  # service had a burst since a window before the refusal, destroyed otherwise. A burst is logged
  # once per window (an error line), counted in Redis and shown on the admin dashboard.
  module Refusals
    COUNT = 'bulkhead:webpush_refusals:'          # sorted set per push host: refusals by time
    BURST = 'bulkhead:webpush_refusal_burst:'     # per push host: when it last was in a burst
    LOGGED = 'bulkhead:webpush_refusal_logged:'   # per push host, a window after a burst's log line
    KEPT = 'bulkhead:webpush_refusals_kept'       # hash: push host => subscriptions kept
    BURST_MEMORY = 86_400                         # how long a burst's time is kept, seconds

    module_function

    def refused(outcome)
      host = outcome['host']
      window = Settings.refusal_window
      count = record(host, outcome['jid'].to_s, window)
      if count >= Settings.refusal_burst || in_burst?(host)
        burst!(host, count, window)
        keep(host)
      else
        Bulkhead::WebpushRefusalCheck.perform_in(window, outcome, Time.now.to_f)
      end
    end

    # A window after a lone refusal (at `refused_at`): destroyed unless its push service had a
    # burst since a window before it. However late Sidekiq runs the check, a burst is not missed.
    def decide(outcome, refused_at)
      burst_at = last_burst(outcome['host'])
      if burst_at && burst_at >= refused_at.to_f - Settings.refusal_window
        keep(outcome['host'])
      else
        Bulkhead::Outcomes.destroy_subscription(outcome)
      end
    end

    def record(host, member, window)
      now = Time.now.to_f
      Sidekiq.redis do |c|
        c.call('ZADD', COUNT + host, now, "#{member}:#{now}")
        c.call('ZREMRANGEBYSCORE', COUNT + host, '-inf', now - window)
        c.call('EXPIRE', COUNT + host, window * 2)
        c.call('ZCARD', COUNT + host)
      end
    end

    def burst!(host, count, window)
      first = Sidekiq.redis do |c|
        c.call('SET', BURST + host, Time.now.to_f.to_s, 'EX', BURST_MEMORY)
        c.call('SET', LOGGED + host, '1', 'EX', window, 'NX')
      end
      return unless first

      Bulkhead.logger.error("bulkhead: push service #{host} refused #{count} Web Push notifications with 401/403 " \
                            "within #{window} s: this server's VAPID key is likely not the one its subscriptions " \
                            'were made with (VAPID_PRIVATE_KEY / VAPID_PUBLIC_KEY, and bulkhead\'s vapid-key); ' \
                            'the subscriptions are kept')
    end

    def keep(host)
      Sidekiq.redis { |c| c.call('HINCRBY', KEPT, host, 1) }
    end

    def last_burst(host)
      at = Sidekiq.redis { |c| c.call('GET', BURST + host) }
      at&.to_f
    end

    # In a burst now: one within the last window.
    def in_burst?(host)
      at = last_burst(host)
      !at.nil? && at >= Time.now.to_f - Settings.refusal_window
    end

    # {push host => subscriptions kept} for the push services in a burst now.
    def bursts
      kept = Sidekiq.redis { |c| c.call('HGETALL', KEPT) }
      kept = kept.each_slice(2).to_h if kept.is_a?(Array)
      kept.select { |host, _| in_burst?(host) }.transform_values(&:to_i)
    end
  end

  # What the outcome jobs do in Mastodon (docs/deliveries.md, "Outcome jobs": one object each).
  module Outcomes
    module_function

    def webpush_gone(outcome)
      destroy_subscription(outcome)
    end

    def delivery_dead(outcome)
      case outcome['jobtype']
      when 'webpush' then webpush_dead(outcome)
      when 'activitypub' then activitypub_dead(outcome)
      end
    end

    # Web::PushNotificationWorker destroys the subscription on any 4xx but 408 and 429.
    def webpush_dead(outcome)
      status = outcome['status']
      return unless status.is_a?(Integer) && (400..499).cover?(status) && ![408, 429].include?(status)
      return Refusals.refused(outcome) if [401, 403].include?(status)

      destroy_subscription(outcome)
    end

    # ActivityPub::DeliveryWorker tracks a failure unless the answer was "unsalvageable"
    # (JsonLdHelper#response_error_unsalvageable?, app/helpers/jsonld_helper.rb: 501, or a 4xx but
    # 401, 408 and 429), which it counts as done.
    def activitypub_dead(outcome)
      status = outcome['status']
      return if status.is_a?(Integer) && (status == 501 || ((400...500).cover?(status) && ![401, 408, 429].include?(status)))

      DeliveryFailureTracker.new(outcome['url']).track_failure!
    end

    # bulkhead found the host failing for its unavailable period: as DeliveryFailureTracker does
    # once it has counted its days (UnavailableDomain.create).
    def host_unavailable(outcome)
      domain = domain_of(outcome['host'])
      UnavailableDomain.create(domain: domain) unless UnavailableDomain.where(domain: domain).exists?
      Bulkhead.logger.info("bulkhead: #{domain} is unavailable (failing since #{outcome['since'] || '?'}); " \
                           'deliveries to it stop until it answers again')
    end

    # A host announced unavailable answered again: DeliveryFailureTracker#track_success! (clears
    # its failure days and its UnavailableDomain).
    def host_available(outcome)
      DeliveryFailureTracker.new(domain_of(outcome['host'])).track_success!
    end

    # The subscription in the job's context, if it still has the endpoint the push went to.
    def destroy_subscription(outcome)
      id = outcome.dig('context', 'web_push_subscription_id')
      subscription = id && Web::PushSubscription.find_by(id: id)
      subscription.destroy! if subscription && subscription.endpoint == outcome['url']
    end

    # bulkhead's host ("host" or "host:port") as DeliveryFailureTracker keys it (the normalized
    # host of the URL).
    def domain_of(host)
      Addressable::URI.parse("https://#{host}/").normalized_host
    end
  end

  # The outcome jobs bulkhead writes to Mastodon's Sidekiq (its sidekiq.*_class defaults).
  class WebpushGone
    include Sidekiq::Worker
    sidekiq_options queue: 'default'

    def perform(outcome)
      Outcomes.webpush_gone(outcome)
    end
  end

  class DeliveryDead
    include Sidekiq::Worker
    sidekiq_options queue: 'default'

    def perform(outcome)
      Outcomes.delivery_dead(outcome)
    end
  end

  class HostUnavailable
    include Sidekiq::Worker
    sidekiq_options queue: 'default'

    def perform(outcome)
      Outcomes.host_unavailable(outcome)
    end
  end

  class HostAvailable
    include Sidekiq::Worker
    sidekiq_options queue: 'default'

    def perform(outcome)
      Outcomes.host_available(outcome)
    end
  end

  # A lone 401/403, decided a window later (Refusals).
  class WebpushRefusalCheck
    include Sidekiq::Worker
    sidekiq_options queue: 'default'

    def perform(outcome, refused_at)
      Refusals.decide(outcome, refused_at)
    end
  end

  # Admin::SystemCheck (app/lib/admin/system_check.rb): one more message on the admin dashboard
  # while a push service refuses this server's VAPID signature.
  module SystemCheck
    MESSAGE_KEY = :bulkhead_webpush_refused

    def perform(current_user)
      messages = super
      bursts = Bulkhead::Refusals.bursts
      return messages if bursts.empty? || !current_user.can?(:view_devops)

      value = bursts.map { |host, kept| "#{host} (#{kept} kept)" }.join(', ')
      messages + [Admin::SystemCheck::Message.new(MESSAGE_KEY, value)]
    rescue StandardError => e
      Bulkhead.logger.warn("bulkhead: the dashboard check failed: #{e.class}: #{e.message}")
      messages || []
    end

    TEXT = 'Push services refuse this server\'s Web Push signature (HTTP 401/403): %{value}. ' \
           'Check that VAPID_PRIVATE_KEY and VAPID_PUBLIC_KEY are the keys the subscriptions were made ' \
           'with, and that bulkhead uses the same (bulkhead vapid-key). Meanwhile bulkhead keeps the ' \
           'subscriptions instead of deleting them.'
  end

  # Installs the modules above into Mastodon's classes (once per code load: Rails runs to_prepare
  # blocks again after a reload in development).
  module Mastodon
    WORKERS = { 'webpush' => ['Web::PushNotificationWorker', Bulkhead::WebPushWorker],
                'activitypub' => ['ActivityPub::DeliveryWorker', Bulkhead::ActivityPubWorker],
                'webhook' => ['Webhooks::DeliveryWorker', Bulkhead::WebhookWorker] }.freeze

    class << self
      attr_reader :webpush_features

      # Checks the shape and prepends; returns the deliveries handed to bulkhead (none when the
      # shape is not the expected one). Logs one line either way.
      def install
        deliveries = Settings.deliveries
        return log_once(:info, 'bulkhead: BULKHEAD_DELIVERIES is none; Mastodon delivers everything itself') if deliveries.empty?

        problems = Shape.problems(deliveries)
        return refuse(problems) unless problems.empty?

        deliveries.each { |d| prepend_into(*WORKERS.fetch(d)) }
        install_system_check
        log_once(:info, "bulkhead: #{deliveries.join(', ')} deliveries go to bulkhead (Sidekiq queue " \
                        "#{Settings.queue}); #{describe_features}")
        deliveries
      end

      def installed?(delivery)
        name, mod = WORKERS.fetch(delivery)
        klass = Shape.constant(name)
        klass ? klass.ancestors.include?(mod) : false
      end

      private

      def prepend_into(name, mod)
        klass = Object.const_get(name)
        @webpush_features = Shape.webpush_features(klass) if mod == Bulkhead::WebPushWorker
        klass.prepend(mod)
      end

      def refuse(problems)
        log_once(:warn, "bulkhead: Mastodon's workers left untouched, Mastodon delivers everything itself: " \
                        "#{problems.join('; ')} (this file was written for Mastodon 4.3 and later)")
        []
      end

      def describe_features
        return 'Web Push not routed' unless @webpush_features

        on = @webpush_features.select { |_, v| v }.keys
        "Web Push features of this version: #{on.empty? ? 'none' : on.join(', ')}"
      end

      def install_system_check
        check = Shape.constant('Admin::SystemCheck')
        return unless check.respond_to?(:perform) && Shape.constant('Admin::SystemCheck::Message')

        check.singleton_class.prepend(Bulkhead::SystemCheck)
        return unless defined?(I18n) && I18n.respond_to?(:backend)

        I18n.backend.store_translations(:en, admin: { system_checks: { SystemCheck::MESSAGE_KEY =>
          { message_html: SystemCheck::TEXT } } })
      end

      # One line per distinct message per process (to_prepare runs again after a reload).
      def log_once(level, line)
        @logged ||= {}
        return [] if @logged[line]

        @logged[line] = true
        Bulkhead.logger.public_send(level, line)
        []
      end
    end
  end
end

Rails.application.config.to_prepare { Bulkhead::Mastodon.install } if defined?(Rails) && Rails.respond_to?(:application)
