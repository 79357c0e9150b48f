import { messageOf } from './errors';

/** A file-system error in words a person understands (`no such file`, `permission denied`, ...). */
export function describeFileError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a parent of it is not a directory';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'ENXIO':
      // What open() says for a Unix socket, or a device file with no device behind it.
      return 'is a socket or a device with nothing behind it, not a regular file';
    default:
      return messageOf(error);
  }
}
