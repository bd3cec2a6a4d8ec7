/** Contract of the canary analysis activity. */

export interface AnalysisRequest {
  /** http(s) URL, requested with GET. */
  url: string;
  /** Status that counts as healthy; default 200. */
  expectedStatus?: number;
  /**
   * Optional threshold on a number in the JSON body. `field` is a dot path such as
   * `metrics.error_rate`, array elements by index: `items.0.value`. min and max are inclusive.
   */
  json?: { field: string; min?: number; max?: number };
  /** Per request (connect, headers and body); default 10. Fractions allowed. */
  timeoutSeconds?: number;
}

export interface AnalysisResult {
  ok: boolean;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** The number found at `json.field`, when it was found. */
  value?: number;
  /** One line saying what was checked and why it passed or failed; quotes at most 200 chars of the body. */
  message: string;
}
