/** Types that cross the network (docs/api.md §5.1). */

export interface Identity {
  provider: string;
  email: string | null;
  created_at: string;
}

export interface User {
  id: string;
  email: string | null;
  email_confirmed_at: string | null;
  phone: string | null;
  phone_confirmed_at: string | null;
  name: string | null;
  avatar: string | null;
  created_at: string;
  updated_at: string;
  last_sign_in_at: string | null;
  identities: Identity[];
}

export interface Session {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: User;
}

export interface Keys {
  public_key: string;
  secret_key: string;
}

export type Plan = 'free' | 'pro' | 'team' | 'enterprise';
