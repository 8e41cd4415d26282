/**
 * A minimal browser for HTTP-level dashboard tests: keeps cookies across requests, never follows redirects
 * on its own (tests look at them), and reads the CSRF token out of the page as a browser form would send it.
 */

export interface PageResponse {
  status: number;
  headers: Headers;
  body: string;
  location?: string;
}

export class DashboardSession {
  readonly cookies = new Map<string, string>();

  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async request(
    path: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<PageResponse> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0\b/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return {
      status: response.status,
      headers: response.headers,
      body: await response.text(),
      location: response.headers.get('location') ?? undefined,
    };
  }

  async login(token: string): Promise<PageResponse> {
    return this.request('/dashboard/login', { form: { token, next: '/dashboard/orders' } });
  }

  /** The CSRF token a page's forms carry. */
  async csrf(path = '/dashboard/held'): Promise<string> {
    const page = await this.request(path);
    const match = /name="_csrf" value="([^"]+)"/.exec(page.body);
    if (!match) throw new Error(`no CSRF token on ${path} (status ${page.status})`);
    return match[1]!;
  }
}
