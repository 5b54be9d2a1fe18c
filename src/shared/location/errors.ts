// The one error a location's configuration raises: a person must fix it, retrying cannot.

/** The location or its Secrets are missing or incomplete: a person must fix the configuration. */
export class LocationError extends Error {
  override name = 'LocationError';
}
