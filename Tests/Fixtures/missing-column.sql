-- A database whose user table lacks emailVerified and whose account table lacks providerId.
create table "user" ("id" text not null primary key, "name" text not null, "email" text not null unique, "createdAt" date not null, "updatedAt" date not null);
create table "session" ("id" text not null primary key, "expiresAt" date not null, "token" text not null unique, "createdAt" date not null, "updatedAt" date not null, "userId" text not null references "user" ("id"));
create table "account" ("id" text not null primary key, "accountId" text not null, "userId" text not null references "user" ("id"), "createdAt" date not null, "updatedAt" date not null);
insert into "user" values ('m1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'Omar Haddad', 'omar@example.com', '2025-01-02T03:04:05.678Z', '2025-01-02T03:04:05.678Z');
