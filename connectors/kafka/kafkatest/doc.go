// Package kafkatest runs an in-process Kafka cluster for tests: several brokers that
// speak the real Kafka protocol (franz-go's kfake), so librdkafka talks to them exactly
// as it talks to a production cluster. Helpers produce records with an independent
// client (franz-go's kgo) and inject the failures pipesql must survive: brokers removed
// hard, brokers decommissioned with the partitions they led left without a leader
// (Decommission, and their return), metadata requests that hang, a group coordinator
// that is unavailable, partitions added while a job runs, and every broker down at once.
//
// kfake's RemoveNode only closes a broker's listener; connections already open keep
// being served. RemoveBrokerHard also fails every request that still reaches the
// removed broker, which closes those connections, as a decommissioned broker would.
package kafkatest
