// Package restart decides whether and when a failed job is restarted, with Flink's
// restart strategies, their setting names and their defaults (Flink 1.19 and later):
//
//	restart-strategy.type = none | off | disable
//	    a failure fails the job
//	restart-strategy.type = fixed-delay | fixeddelay
//	    restart-strategy.fixed-delay.attempts (1): restarts before the job fails
//	    restart-strategy.fixed-delay.delay (1 s): wait before each restart
//	restart-strategy.type = failure-rate | failurerate
//	    restart-strategy.failure-rate.max-failures-per-interval (1)
//	    restart-strategy.failure-rate.failure-rate-interval (1 min)
//	    restart-strategy.failure-rate.delay (1 s)
//	    the job fails when more than max-failures-per-interval failures happen
//	    within one failure-rate-interval
//	restart-strategy.type = exponential-delay | exponentialdelay
//	    restart-strategy.exponential-delay.initial-backoff (1 s)
//	    restart-strategy.exponential-delay.max-backoff (1 min)
//	    restart-strategy.exponential-delay.backoff-multiplier (1.5)
//	    restart-strategy.exponential-delay.jitter-factor (0.1)
//	    restart-strategy.exponential-delay.reset-backoff-threshold (1 h)
//	    restart-strategy.exponential-delay.attempts-before-reset-backoff (unlimited)
//
// The older key restart-strategy is read when restart-strategy.type is not set. Without
// either, a job with checkpointing enabled restarts with exponential-delay (Flink's
// default since 1.19; before, fixed-delay with unlimited attempts), and a job without
// checkpointing does not restart: it would start over from nothing, which is rarely
// what a long-running job wants.
//
// The n-th consecutive exponential-delay restart waits initial-backoff *
// backoff-multiplier^(n-1), plus or minus up to jitter-factor of that, kept between
// initial-backoff and max-backoff, as Flink computes it. A job that ran for
// reset-backoff-threshold since its last restart starts again from initial-backoff, with
// its attempts counted from zero.
//
// A Strategy is told the time of each failure by its caller, which reads it from the
// job's injected clock, so tests check the prescribed delays without sleeping.
package restart
