// The test binary's load-time engine registration (registration.c); nothing to call.
#pragma once
