# frozen_string_literal: true

# The initializer (../bulkhead.rb) in one Ruby process against the Mastodon stand-ins
# (stand_ins.rb), in the shape MASTODON_SHAPE names: what it installs or refuses, the jobs it
# pushes (Sidekiq's fake mode keeps them in Sidekiq::Queues), and what the outcome jobs do to the
# stand-in database. A redis-server on a free port holds what Redis holds in Mastodon (failure
# days, refusal counts, the signing-key cache); a small HTTP server stands in for bulkhead's keys
# API. The end-to-end run with a real Sidekiq process and a real bulkhead is tests/mastodon/.
#   ruby integrations/mastodon/test/adapter_test.rb      (MASTODON_SHAPE=aesgcm|changed for the others)
require 'minitest/autorun'
require 'socket'
require 'stringio'
require 'tmpdir'
require 'webrick'

TMP = Dir.mktmpdir('bulkhead-mastodon-')
ENV['MASTODON_DB'] = File.join(TMP, 'mastodon.db')
require_relative 'stand_ins'
require 'sidekiq/testing'

# A redis-server of our own, stopped at exit.
module TestRedis
  def self.start
    port = TCPServer.open('127.0.0.1', 0) { |s| s.addr[1] }
    pid = spawn('redis-server', '--port', port.to_s, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
                out: File::NULL, err: File::NULL)
    Minitest.after_run do
      Process.kill('TERM', pid)
      Process.wait(pid)
      FileUtils.rm_rf(TMP)
    end
    100.times do
      return port if (TCPSocket.new('127.0.0.1', port).close rescue false).nil?

      sleep 0.05
    end
    raise "redis-server did not start on #{port}"
  end
end

# bulkhead's PUT /api/keys/<id>, recorded.
module KeysApi
  PUTS = Queue.new

  def self.start
    server = WEBrick::HTTPServer.new(Port: 0, BindAddress: '127.0.0.1', Logger: WEBrick::Log.new(File::NULL),
                                     AccessLog: [])
    server.mount_proc('/api/keys/') do |req, res|
      PUTS << [req.request_method, req.unparsed_uri, req['Authorization'], req.body]
      res.status = 201
      res.body = '{}'
    end
    Thread.new { server.start }
    Minitest.after_run { server.shutdown }
    "http://127.0.0.1:#{server.config[:Port]}"
  end
end

ENV['REDIS_URL'] = "redis://127.0.0.1:#{TestRedis.start}/0"
ENV['BULKHEAD_URL'] = KeysApi.start
ENV['BULKHEAD_PASSWORD'] = 'sekret'
ENV['BULKHEAD_REFUSAL_BURST'] = '3'
Sidekiq.configure_client { |config| config.redis = { url: ENV.fetch('REDIS_URL'), size: 5 } }
Sidekiq.logger.level = Logger::WARN
Sidekiq::Testing.fake!
LOG = StringIO.new
Rails.logger = Logger.new(LOG)
MastodonStandIns.connect
MastodonStandIns.create_schema
MastodonStandIns.boot

class AdapterTest < Minitest::Test
  ALICE_PEM = OpenSSL::PKey::RSA.new(2048).to_pem

  def setup
    Sidekiq::Worker.clear_all
    Sidekiq.redis(&:flushdb)
    [Web::PushSubscription, Notification, Account, User, UnavailableDomain, Webhook].each(&:delete_all)
    Bulkhead::SigningKeys.forget_all
    KeysApi::PUTS.clear
    @alice = Account.create!(username: 'alice', private_key: ALICE_PEM)
    @bob = Account.create!(username: 'bob')
  end

  def subscription(standard: true, locale: 'fr', data: { 'alerts' => { 'mention' => true } })
    Web::PushSubscription.create!(endpoint: "https://push.example/s/#{SecureRandom.hex(4)}", key_p256dh: 'BCVx',
                                  key_auth: 'BTBZ', standard: standard, data: data,
                                  user: User.create!(locale: locale), access_token_id: 7)
  end

  def notification(updated_at: Time.now.utc, activity_id: 1)
    Notification.create!(type: 'mention', account: @bob, from_account: @alice, activity_id: activity_id,
                         updated_at: updated_at)
  end

  def jobs
    Sidekiq::Queues['bulkhead']
  end

  def sent
    Sidekiq.redis { |c| c.call('LRANGE', 'test:mastodon_sent', 0, -1) }.map { |j| JSON.parse(j) }
  end

  def outcome(event, jobtype, status, subscription, extra = {})
    { 'event' => event, 'host' => 'push.example', 'status' => status, 'jid' => SecureRandom.hex(8),
      'jobtype' => jobtype, 'url' => subscription.endpoint,
      'context' => { 'web_push_subscription_id' => subscription.id } }.merge(extra)
  end
end

if MASTODON_SHAPE == '4.4'
  class Shape44Test < AdapterTest
    def test_installs_into_the_three_workers_and_says_so_in_one_line
      assert(%w(webpush activitypub webhook).all? { |d| Bulkhead::Mastodon.installed?(d) })
      lines = LOG.string.lines.grep(/bulkhead: .*(deliveries go to bulkhead|left untouched)/)
      assert_equal 1, lines.size, LOG.string
      assert_match(/webpush, activitypub, webhook deliveries go to bulkhead \(Sidekiq queue bulkhead\)/, lines[0])
      assert_match(/standard, unsubscribe_url, stale_check/, lines[0])
    end

    def test_a_standard_subscription_gets_an_aes128gcm_job_rendered_in_its_locale
      sub = subscription(standard: true, locale: 'fr')
      note = notification
      Web::PushNotificationWorker.new.perform(sub.id, note.id)
      assert_equal 1, jobs.size
      job = jobs.first
      assert_equal ['webpush', 5], [job['class'], job['retry']]
      args = job['args'][0]
      assert_equal({ 'endpoint' => sub.endpoint, 'keys' => { 'p256dh' => 'BCVx', 'auth' => 'BTBZ' } }, args['subscription'])
      assert_equal ['aes128gcm', 172_800, 'normal'], args.values_at('content_encoding', 'ttl', 'urgency')
      assert_equal "https://social.example/api/web/push_subscriptions/#{sub.generate_token_for(:unsubscribe)}",
                   args['unsubscribe_url']
      assert_equal({ 'web_push_subscription_id' => sub.id, 'notification_id' => note.id }, args['context'])
      payload = JSON.parse(args['payload'])
      assert_equal ['alice vous a mentionné', 'fr', 'token-7'], payload.values_at('title', 'preferred_locale', 'access_token')
      assert_empty sent, 'Mastodon sends nothing itself'
    end

    def test_a_legacy_subscription_gets_aesgcm
      Web::PushNotificationWorker.new.perform(subscription(standard: false, locale: 'en').id, notification.id)
      args = jobs.first['args'][0]
      assert_equal 'aesgcm', args['content_encoding']
      assert_equal 'alice mentioned you', JSON.parse(args['payload'])['title']
    end

    def test_mastodons_checks_still_decide_whether_to_push
      sub = subscription
      Web::PushNotificationWorker.new.perform(sub.id, notification(updated_at: 49.hours.ago).id)
      Web::PushNotificationWorker.new.perform(sub.id, notification(activity_id: nil).id)
      Web::PushNotificationWorker.new.perform(subscription(data: { 'policy' => 'none', 'alerts' => { 'mention' => true } }).id,
                                              notification.id)
      Web::PushNotificationWorker.new.perform(subscription(data: { 'alerts' => { 'mention' => false } }).id, notification.id)
      assert_equal true, Web::PushNotificationWorker.new.perform(0, notification.id), 'a missing row ends the job'
      assert_empty jobs
    end

    def test_a_webhook_is_signed_as_mastodon_signs_it
      hook = Webhook.create!(url: 'https://hooks.example/in', secret: 's3cret')
      body = '{"event":"account.created","object":{"id":"7"}}'
      Webhooks::DeliveryWorker.new.perform(hook.id, body)
      job = jobs.first
      assert_equal ['webhook', 16, false], job.values_at('class', 'retry', 'dead')
      args = job['args'][0]
      assert_equal ['https://hooks.example/in', 'POST', body], args.values_at('url', 'method', 'body')
      assert_equal({ 'Content-Type' => 'application/json',
                     'X-Hub-Signature' => "sha256=#{OpenSSL::HMAC.hexdigest('SHA256', 's3cret', body)}" }, args['headers'])
    end

    def test_an_activity_names_the_key_registered_once_and_again_after_a_rotation
      json = '{"type":"Create","actor":"https://social.example/users/alice"}'
      worker = ActivityPub::DeliveryWorker
      worker.new.perform(json, @alice.id, 'https://remote.example/inbox', 'synchronize_followers' => true)
      worker.new.perform(json, @alice.id, 'https://other.example/inbox')
      assert_equal 1, KeysApi::PUTS.size, 'registered once'
      method, path, auth, pem = KeysApi::PUTS.pop
      assert_equal ['PUT', '/api/keys/https%3A%2F%2Fsocial.example%2Fusers%2Falice%23main-key', 'Bearer sekret'],
                   [method, path, auth]
      assert_equal @alice.keypair.to_pem, pem
      first, second = jobs.map { |j| j['args'][0] }
      assert_equal ['activitypub', 16, false], jobs.first.values_at('class', 'retry', 'dead')
      assert_equal [json, 'https://remote.example/inbox', 'https://social.example/users/alice#main-key'],
                   first.values_at('activity', 'inbox', 'key_id')
      assert_match(/\AcollectionId="https:\/\/social.example\/users\/alice\/followers", digest="\h{64}", url=/,
                   first['headers']['Collection-Synchronization'])
      refute second.key?('headers')
      refute_includes JSON.generate(jobs), 'PRIVATE KEY'

      Account.find(@alice.id).update!(private_key: OpenSSL::PKey::RSA.new(2048).to_pem)
      Bulkhead::SigningKeys.forget_all  # another process: only Redis remembers
      worker.new.perform(json, @alice.id, 'https://remote.example/inbox')
      assert_equal 1, KeysApi::PUTS.size, 'the rotated key is registered'
    end

    def test_an_unavailable_domain_gets_nothing_and_sign_with_stays_with_mastodon
      UnavailableDomain.create!(domain: 'dead.example')
      ActivityPub::DeliveryWorker.new.perform('{}', @alice.id, 'https://dead.example/inbox')
      ActivityPub::DeliveryWorker.new.perform('{}', @alice.id, 'https://remote.example/inbox', 'sign_with' => 'PEM')
      assert_empty jobs
      assert_equal [['ActivityPub::DeliveryWorker', ['https://remote.example/inbox', '{}', nil, true]]],
                   sent.map { |s| [s['worker'], s['detail']] }
    end

    def test_gone_and_dead_webpush_outcomes_destroy_where_mastodon_would
      gone, bad, throttled, moved = Array.new(4) { subscription }
      Bulkhead::WebpushGone.new.perform(outcome('webpush_gone', 'webpush', 410, gone))
      Bulkhead::DeliveryDead.new.perform(outcome('delivery_dead', 'webpush', 400, bad))
      Bulkhead::DeliveryDead.new.perform(outcome('delivery_dead', 'webpush', 429, throttled))
      Bulkhead::WebpushGone.new.perform(outcome('webpush_gone', 'webpush', 404, moved, 'url' => 'https://push.example/old'))
      assert_equal [throttled.id, moved.id].sort, Web::PushSubscription.pluck(:id).sort
    end

    def test_a_lone_401_is_decided_a_window_later_and_a_burst_destroys_nothing
      lone = subscription
      Bulkhead::DeliveryDead.new.perform(outcome('delivery_dead', 'webpush', 401, lone))
      assert Web::PushSubscription.exists?(lone.id), 'kept until a window has passed'
      assert_equal 1, Bulkhead::WebpushRefusalCheck.jobs.size
      Bulkhead::WebpushRefusalCheck.drain
      refute Web::PushSubscription.exists?(lone.id), 'no burst came: destroyed as Mastodon would'

      subs = Array.new(5) { subscription }
      subs.each { |s| Bulkhead::DeliveryDead.new.perform(outcome('delivery_dead', 'webpush', 403, s)) }
      Bulkhead::WebpushRefusalCheck.drain
      assert_equal subs.map(&:id).sort, Web::PushSubscription.pluck(:id).sort, 'a burst destroys nothing'
      assert_equal 1, LOG.string.lines.grep(/push service push.example refused 3 Web Push notifications/).size
      assert_equal({ 'push.example' => 5 }, Bulkhead::Refusals.bursts)
      admin = Struct.new(:devops) { def can?(_) = devops }
      message = Admin::SystemCheck.perform(admin.new(true)).last
      assert_equal [:bulkhead_webpush_refused, 'push.example (5 kept)'], [message.key, message.value]
      assert_match(/refuse this server's Web Push signature/, I18n.t('admin.system_checks.bulkhead_webpush_refused.message_html'))
      assert_empty Admin::SystemCheck.perform(admin.new(false))
    end

    def test_a_refusal_checked_late_still_sees_the_burst_that_followed_it
      early, lone = subscription, subscription
      refused_at = Time.now.to_f - 3600  # the check runs an hour after the refusal
      Sidekiq.redis { |c| c.call('SET', Bulkhead::Refusals::BURST + 'push.example', (refused_at + 5).to_s) }
      Bulkhead::WebpushRefusalCheck.new.perform(outcome('delivery_dead', 'webpush', 401, early), refused_at)
      assert Web::PushSubscription.exists?(early.id), 'a burst came after it: kept'
      Bulkhead::WebpushRefusalCheck.new.perform(outcome('delivery_dead', 'webpush', 401, lone), refused_at + 1200)
      refute Web::PushSubscription.exists?(lone.id), 'the burst was long before it: destroyed'
    end

    def test_activitypub_outcomes_feed_mastodons_failure_tracking
      dead = { 'event' => 'delivery_dead', 'jobtype' => 'activitypub', 'url' => 'https://remote.example/inbox' }
      Bulkhead::DeliveryDead.new.perform(dead.merge('status' => 404, 'host' => 'remote.example'))
      assert_equal 0, DeliveryFailureTracker.new('remote.example').days, '404 is unsalvageable: done, not a failure'
      Bulkhead::DeliveryDead.new.perform(dead.merge('status' => 503, 'host' => 'remote.example'))
      Bulkhead::DeliveryDead.new.perform(dead.merge('status' => nil, 'host' => 'remote.example'))
      assert_equal 1, DeliveryFailureTracker.new('remote.example').days

      Bulkhead::HostUnavailable.new.perform('event' => 'host_unavailable', 'host' => 'Remote.Example:8443', 'status' => nil)
      Bulkhead::HostUnavailable.new.perform('event' => 'host_unavailable', 'host' => 'remote.example', 'status' => 503)
      assert_equal ['remote.example'], UnavailableDomain.pluck(:domain)
      refute DeliveryFailureTracker.available?('https://remote.example/inbox')
      Bulkhead::HostAvailable.new.perform('event' => 'host_available', 'host' => 'remote.example', 'status' => nil)
      assert_empty UnavailableDomain.all
      assert_equal 0, DeliveryFailureTracker.new('remote.example').days
    end
  end
end

if MASTODON_SHAPE == 'aesgcm'
  class ShapeAesgcmTest < AdapterTest
    def test_a_version_without_standard_encryption_pushes_what_it_would_send
      assert Bulkhead::Mastodon.installed?('webpush')
      Web::PushNotificationWorker.new.perform(subscription(standard: true).id, notification(updated_at: 49.hours.ago).id)
      args = jobs.first['args'][0]
      assert_equal ['aesgcm', 172_800], args.values_at('content_encoding', 'ttl')
      refute args.key?('unsubscribe_url'), 'that version sends no Unsubscribe-URL'
      assert_match(/Web Push features of this version: none/, LOG.string)
    end
  end
end

if MASTODON_SHAPE == 'changed'
  class ShapeChangedTest < AdapterTest
    def test_a_changed_shape_leaves_every_worker_untouched
      refute(%w(webpush activitypub webhook).any? { |d| Bulkhead::Mastodon.installed?(d) })
      lines = LOG.string.lines.grep(/bulkhead:/)
      assert_equal 1, lines.size, LOG.string
      assert_match(/Mastodon's workers left untouched.*Web::PushNotificationWorker#perform takes 3 arguments, expected perform\(subscription_id, notification_id\)/,
                   lines[0])
      Web::PushNotificationWorker.new.perform(1, 2, 3)
      Webhooks::DeliveryWorker.new.perform(Webhook.create!(url: 'https://h.example/', secret: 's').id, '{}')
      assert_empty jobs
      assert_equal ['Web::PushNotificationWorker', 'Webhooks::DeliveryWorker'], sent.map { |s| s['worker'] }
    end
  end
end
