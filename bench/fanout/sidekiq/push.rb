# frozen_string_literal: true

# Pushes the fan-out's deliveries into Sidekiq as Mastodon's ActivityPub::DistributionWorker does
# (Sidekiq::Client.push_bulk, 1,000 jobs a call). Input: a JSON file {"activity": STRING,
# "urls": [inbox URL, ...]}. Prints one line per call before it is made: the time in
# milliseconds on CLOCK_MONOTONIC (the receivers' clock), the index of its first job and its job
# count.
require 'json'
require 'sidekiq'

input = JSON.parse(File.read(ARGV.fetch(0)))
activity = input.fetch('activity')
input.fetch('urls').each_slice(1000).with_index do |urls, i|
  at = Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_millisecond)
  $stdout.puts format('%.3f %d %d', at, i * 1000, urls.size)
  Sidekiq::Client.push_bulk('class' => 'FanoutDeliveryWorker', 'queue' => 'push',
                            'args' => urls.map { |u| [activity, u] })
end
$stdout.flush
