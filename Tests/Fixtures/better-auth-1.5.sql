-- A database as Better Auth 1.5's CLI created it: no account.issuer, no unique (issuer, accountId).
create table "user" ("id" text not null primary key, "name" text not null, "email" text not null unique, "emailVerified" integer not null, "image" text, "createdAt" date not null, "updatedAt" date not null);
create table "session" ("id" text not null primary key, "expiresAt" date not null, "token" text not null unique, "createdAt" date not null, "updatedAt" date not null, "ipAddress" text, "userAgent" text, "userId" text not null references "user" ("id") on delete cascade);
create table "account" ("id" text not null primary key, "accountId" text not null, "providerId" text not null, "userId" text not null references "user" ("id") on delete cascade, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" date, "refreshTokenExpiresAt" date, "scope" text, "password" text, "createdAt" date not null, "updatedAt" date not null);
create table "verification" ("id" text not null primary key, "identifier" text not null, "value" text not null, "expiresAt" date not null, "createdAt" date, "updatedAt" date);
create index "session_userId_idx" on "session" ("userId");
create index "account_userId_idx" on "account" ("userId");
insert into "user" values ('u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'Ana Costa', 'ana@example.com', 1, null, '2025-01-02T03:04:05.678Z', '2025-01-02T03:04:05.678Z');
insert into "user" values ('u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', 'Ana Costa', 'k3x9q2w8zz@privaterelay.appleid.com', 1, null, '2025-02-02T03:04:05.678Z', '2025-02-02T03:04:05.678Z');
insert into "account" values ('a1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '104857600000000000001', 'google', 'u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'secret-access-token', null, null, null, null, 'openid email', null, '2025-01-02T03:04:05.678Z', '2025-01-02T03:04:05.678Z');
insert into "account" values ('a2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', '001234.abcdef.0001', 'apple', 'u2BBBBBBBBBBBBBBBBBBBBBBBBBBBBBB', null, null, null, null, null, 'email name', null, '2025-02-02T03:04:05.678Z', '2025-02-02T03:04:05.678Z');
insert into "session" values ('s1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '2030-01-01T00:00:00.000Z', 'tok1', '2025-01-02T03:04:05.678Z', '2025-01-02T03:04:05.678Z', '81.2.3.4', 'Mozilla/5.0', 'u1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
