/** An HTTP error of the simulated server, rendered as an OpenAI-style error body. */
export class SimHttpError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  constructor(
    status: number,
    message: string,
    opts: { type?: string; code?: string | null; param?: string | null } = {},
  ) {
    super(message);
    this.name = 'SimHttpError';
    this.status = status;
    this.type = opts.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
    this.code = opts.code ?? null;
    this.param = opts.param ?? null;
  }

  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}
