export interface Acknowledgement {
  event: string;
  message: string;
}

/** Any event without a dedicated handler (ping and an absent event included). */
export function acknowledge(event: string): Acknowledgement {
  return {
    event,
    message:
      event === ''
        ? 'Event received (no event type given); nothing to process.'
        : `Event "${event}" received; no handler for this event type.`,
  };
}
