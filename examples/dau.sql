-- Daily active users per app, as a Flink user writes it.
--
-- Click events arrive as JSON on the Kafka topic `events`:
--   {"app": "shop", "user_id": "u-000123", "event_time": 1700000000123, "action": "click", ...}
-- The job counts the distinct users of each app per calendar day in Asia/Shanghai and
-- writes one row per app and day to the compacted topic `dau`.
--
-- Run it:          pipesql run examples/dau.sql
-- Look at its plan: pipesql explain examples/dau.sql

-- Days start at midnight in Beijing (16:00 UTC), not at midnight UTC.
SET 'table.local-time-zone' = 'Asia/Shanghai';
-- A partition that has sent nothing for 30 seconds stops holding the watermark back.
SET 'table.exec.source.idle-timeout' = '30 s';
SET 'execution.checkpointing.interval' = '10 s';
SET 'pipeline.name' = 'dau';

CREATE TABLE events (
  app        STRING,
  user_id    STRING,
  action     STRING,
  event_time BIGINT,                                  -- epoch milliseconds
  ts AS TO_TIMESTAMP_LTZ(event_time, 3),              -- event time as an instant
  `partition` INT METADATA VIRTUAL,                   -- where the record came from
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND        -- events may be up to 5 s out of order
) WITH (
  'connector' = 'kafka',
  'topic' = 'events',
  'properties.bootstrap.servers' = 'localhost:9092',
  'properties.group.id' = 'dau',
  -- The timeouts from the job that restarted for an hour on Flink. In pipesql a metadata
  -- request that times out makes discovery DEGRADED and retried; the readers keep reading.
  'properties.default.api.timeout.ms' = '60000',
  'properties.request.timeout.ms' = '30000',
  'scan.startup.mode' = 'earliest-offset',
  -- New partitions are picked up within 5 minutes and read from their first record.
  'scan.topic-partition-discovery.interval' = '5 min',
  'format' = 'json',
  'json.ignore-parse-errors' = 'true'
);

CREATE TABLE dau (
  `day`   STRING,
  app     STRING,
  dau     BIGINT,
  PRIMARY KEY (`day`, app) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'dau',
  'properties.bootstrap.servers' = 'localhost:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

-- One row per app and day, emitted when the watermark passes the end of the day.
-- COUNT(DISTINCT user_id) is exact: user ids go into a roaring bitmap per app and day.
INSERT INTO dau
SELECT
  DATE_FORMAT(window_start, 'yyyy-MM-dd') AS `day`,
  app,
  COUNT(DISTINCT user_id) AS dau
FROM TABLE(
  TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '1' DAY))
GROUP BY window_start, window_end, app;
