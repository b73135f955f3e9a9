/**
 * The longest delay node's timers honour: 2^31 - 1 ms, about 24.8 days. A longer one (in
 * setTimeout or a socket's setTimeout) does not wait longer: it fires after 1 ms, with only a
 * TimeoutOverflowWarning. Every duration setting that ends up in a timer is held below it.
 */
export const MAX_TIMER_MS = 2_147_483_647;
