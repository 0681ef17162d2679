# frozen_string_literal: true

# Mastodon's way of delivering, rebuilt from Debian packages for the fan-out benchmark: a Sidekiq
# worker that does what Mastodon's ActivityPub::DeliveryWorker does per job
# (app/workers/activitypub/delivery_worker.rb) with the request Mastodon builds
# (app/lib/request.rb): Date + Digest + draft-cavage rsa-sha256 Signature over
# "(request-target) host date digest content-type", a POST with http.rb (Debian ruby-http) on a
# persistent connection taken from a pool keyed by site (app/lib/request_pool.rb: at most 512,
# idle ones closed after 30 s), under Mastodon's timeouts: connect 5 s, write 10 s, read 10 s per
# read, and at most 30 s for the whole response (its PerOperationWithDeadline).
#
# Left out, with the reason: Account.find and the key's database row (no database here: the
# private key PEM is read once from FANOUT_KEY_FILE, then parsed per job as Account#keypair is for
# each freshly loaded account); Stoplight (keyed by inbox URL, and each inbox gets one delivery per
# run, so it never trips here); DeliveryFailureTracker (it only acts after days of failures);
# Resolv::DNS (Mastodon resolves with DNS only; here names resolve through getaddrinfo, i.e. the
# benchmark's /etc/hosts); the private-address refusal (the hosts are on loopback).
#
# Environment: FANOUT_KEY_FILE, FANOUT_KEY_ID; SSL_CERT_FILE names the benchmark's CA (OpenSSL's
# default verify paths, which http.rb's default SSL context uses, read it); REDIS_URL.
require 'base64'
require 'digest'
require 'http'
require 'openssl'
require 'sidekiq'
require 'socket'
require 'uri'

# redis-rb 4.8 warns at every BRPOP Sidekiq 6.4 makes (a positional timeout).
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)

module Fanout
  TIMEOUT = { connect_timeout: 5, read_timeout: 10, write_timeout: 10, read_deadline: 30 }.freeze
  KEY_PEM = File.read(ENV.fetch('FANOUT_KEY_FILE')).freeze
  KEY_ID = ENV.fetch('FANOUT_KEY_ID').freeze
  HEADERS = { 'Content-Type' => 'application/activity+json' }.freeze
  USER_AGENT = 'http.rb/4.4.1 (Mastodon/4.3.0; +https://origin.fanout.test/)'

  # http.rb's per-operation timeouts, except that reads share one deadline per response.
  class DeadlineTimeout < HTTP::Timeout::PerOperation
    def initialize(*args)
      super
      @read_deadline = options.fetch(:read_deadline, 30)
    end

    # Connects without Ruby's Timeout thread: Socket.open bounds the connect itself.
    def connect(socket_class, host, port, nodelay = false)
      @socket = socket_class.open(host, port)
      @socket.setsockopt(::Socket::IPPROTO_TCP, ::Socket::TCP_NODELAY, 1) if nodelay
    end

    # http.rb calls this when a persistent connection starts another request.
    def reset_counter
      @deadline = nil
    end

    def readpartial(size, buffer = nil)
      @deadline ||= clock + @read_deadline
      waited_out = false
      loop do
        result = @socket.read_nonblock(size, buffer, exception: false)
        return :eof if result.nil?
        return result unless result == :wait_readable

        left = @deadline - clock
        raise HTTP::TimeoutError, "no whole response within #{@read_deadline} s" if left <= 0
        raise HTTP::TimeoutError, "Read timed out after #{@read_timeout} seconds" if waited_out

        # A wait that ends without data is a timeout unless the next read sees the peer close.
        waited_out = true unless @socket.to_io.wait_readable([left, @read_timeout].min)
      end
    end

    private

    def clock
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end

  # Resolves through getaddrinfo (at most two addresses), connects without blocking and gives up
  # after the connect timeout, as Request::Socket does.
  class Socket < TCPSocket
    def self.open(host, port)
      addresses = Addrinfo.getaddrinfo(host, port, nil, :STREAM).take(2)
      raise SocketError, "No address for #{host}" if addresses.empty?

      pending = []
      addresses.each do |a|
        sock = ::Socket.new(a.afamily, ::Socket::SOCK_STREAM, 0)
        sock.setsockopt(::Socket::IPPROTO_TCP, ::Socket::TCP_NODELAY, 1)
        begin
          sock.connect_nonblock(a.to_sockaddr)
          pending.each { |s, _| s.close }
          return sock
        rescue IO::WaitWritable
          pending << [sock, a]
        end
      end
      wait_connected(pending)
    end

    def self.wait_connected(pending)
      error = nil
      until pending.empty?
        _, ready, = IO.select(nil, pending.map(&:first), nil, TIMEOUT[:connect_timeout])
        if ready.nil?
          pending.each { |s, _| s.close }
          raise HTTP::TimeoutError, "Connect timed out after #{TIMEOUT[:connect_timeout]} seconds"
        end
        ready.each do |sock|
          entry = pending.find { |s, _| s == sock }
          pending.delete(entry)
          begin
            sock.connect_nonblock(entry[1].to_sockaddr)
          rescue Errno::EISCONN
            nil
          rescue StandardError => e
            sock.close
            error = e
            next
          end
          pending.each { |s, _| s.close }
          return sock
        end
      end
      raise error || SocketError.new('connect failed')
    end
  end

  # Persistent http.rb clients by site, shared by the worker threads (RequestPool's role).
  class RequestPool
    MAX_SIZE = 512
    MAX_IDLE = 30

    def initialize
      @idle = Hash.new { |h, k| h[k] = [] }
      @total = 0
      @lock = Mutex.new
    end

    def with(site)
      client = take(site)
      fresh = client.nil?
      client ||= HTTP::Client.new(persistent: site, keep_alive_timeout: MAX_IDLE,
                                  timeout_class: DeadlineTimeout, timeout_options: TIMEOUT)
      begin
        result = yield client
      rescue HTTP::ConnectionError
        client.close
        raise if fresh

        client = HTTP::Client.new(persistent: site, keep_alive_timeout: MAX_IDLE,
                                  timeout_class: DeadlineTimeout, timeout_options: TIMEOUT)
        fresh = true
        retry
      rescue StandardError
        client.close
        raise
      end
      give_back(site, client)
      result
    end

    private

    def take(site)
      @lock.synchronize do
        client = @idle[site].pop
        @total -= 1 if client
        client
      end
    end

    def give_back(site, client)
      evicted = nil
      @lock.synchronize do
        @idle[site].push(client)
        @total += 1
        if @total > MAX_SIZE
          victim_site, list = @idle.find { |_, l| !l.empty? }
          evicted = list.shift
          @idle.delete(victim_site) if list.empty?
          @total -= 1
        end
      end
      evicted&.close
    end
  end

  POOL = RequestPool.new

  # The headers Mastodon's Request sends, signed as it signs them.
  def self.signed_headers(url, body)
    headers = {
      '(request-target)' => "post #{url.path}",
      'Host' => url.host,
      'Date' => Time.now.utc.httpdate,
      'Digest' => "SHA-256=#{Digest::SHA256.base64digest(body)}",
    }.merge(HEADERS)
    signed_string = headers.map { |k, v| "#{k.downcase}: #{v}" }.join("\n")
    keypair = OpenSSL::PKey::RSA.new(KEY_PEM)
    signature = Base64.strict_encode64(keypair.sign(OpenSSL::Digest.new('SHA256'), signed_string))
    headers['Signature'] = "keyId=\"#{KEY_ID}\",algorithm=\"rsa-sha256\"," \
                           "headers=\"#{headers.keys.join(' ').downcase}\",signature=\"#{signature}\""
    headers.delete('(request-target)')
    headers.merge('User-Agent' => USER_AGENT, 'Accept-Encoding' => 'gzip')
  end
end

class FanoutDeliveryWorker
  include Sidekiq::Worker

  sidekiq_options queue: 'push', retry: 16, dead: false

  def perform(json, inbox_url)
    url = URI.parse(inbox_url)
    site = "#{url.scheme}://#{url.host}:#{url.port}"
    Fanout::POOL.with(site) do |client|
      response = client.request(:post, inbox_url, body: json, headers: Fanout.signed_headers(url, json))
      response.body.to_s # a persistent connection must read the whole response
      code = response.code
      raise "Delivery failed for #{inbox_url}: HTTP #{code}" unless (200...300).cover?(code) || ((400...500).cover?(code) && code != 429)
    end
  end
end
